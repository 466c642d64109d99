// The registry both loop examples run: a coding agent assembled from plugins the way a harness
// loads them, none of which sets `stability` or `cacheBreakpoint`. Also the agent's workspace: the
// runtime context the harness shows it each step and what its tools return.
import { signal } from '@preact/signals-core'
import type { Context } from 'cordis'
import type { ToolSchema } from '../src/index.js'

/** The identity the SystemPrompt plugin is loaded with. */
export const IDENTITY =
  'You are Loom, a coding agent that works in a TypeScript repository on behalf of its maintainers. ' +
  'You read code before you change it, you make the smallest change that fixes the problem, and you prove every change with the test suite.'

/** The task the loop starts with. */
export const TASK = 'The login test fails with "expected a session cookie". Find the cause and fix it.'

/** The repository's state the runtime context reports; the loop updates it as the agent works. */
export const workspace = {
  branch: signal('fix/login-cookie'),
  gitStatus: signal('clean'),
  openFiles: signal<string[]>([]),
}

function tool(name: string, description: string, properties: Record<string, { type: string; description: string }>, required: string[]): ToolSchema {
  return { name, description, parameters: { type: 'object', properties, required } }
}

/** Team policies: how to work, how to use git, what never to do. */
export const policies = {
  name: 'policies',
  inject: ['systemPrompt'],
  apply(ctx: Context) {
    const prompt = ctx.systemPrompt
    prompt.section({
      name: 'policy:workflow',
      order: prompt.getSectionOrder('PLAN_POLICY'),
      text:
        'Work in small, verifiable steps. Before you edit, state in one sentence what you believe is wrong and which file you will change. ' +
        'Read the failing test first, then the code it exercises, then anything that code calls. ' +
        'After every edit run the narrowest test command that covers it, and the full suite before you report the task as done. ' +
        'When a test fails in a way you did not predict, stop and re-read the code instead of trying variations. ' +
        'Do not refactor code you were not asked to touch, even when it could be improved; mention it in your final report instead.',
    })
    prompt.section({
      name: 'policy:git',
      order: prompt.getSectionOrder('TEAM_POLICY'),
      text:
        'You work on the branch {{branch}}. Never commit to main, never force-push, and never rewrite history that has been pushed. ' +
        'Commit when a change is complete and its tests pass, with a message in the imperative mood that says what the change does and why ' +
        '(for example "Set the session cookie after a successful login"). Keep unrelated changes in separate commits. ' +
        'Do not add generated files, build output or secrets to the repository; the .gitignore lists what stays out.',
    })
    prompt.section({
      name: 'policy:safety',
      order: prompt.getSectionOrder('TEAM_POLICY') + 10,
      text:
        'Commands run in a sandbox with the repository mounted at /work/repo and no network access beyond the package registry mirror. ' +
        'Ask the user before deleting files outside the repository, changing CI configuration, upgrading a dependency across a major version, ' +
        'or running a command that could take longer than ten minutes. Never print environment variables or the contents of .env files. ' +
        'If a task cannot be done within these rules, say so and explain what you would need.',
    })
    prompt.section({
      name: 'policy:reporting',
      order: prompt.getSectionOrder('TEAM_POLICY') + 20,
      text:
        'Your final message is read by a maintainer who did not watch you work. Start with one sentence that says whether the task is done. ' +
        'Then list what you changed, file by file, and why; the commands you ran to prove it, with their results; and anything you noticed ' +
        'but left alone, such as flaky tests or code that looked wrong outside the task. Quote error messages exactly. ' +
        'Do not paste whole files or long command output into the report: name the file and the lines instead. ' +
        'If you could not finish, say what is left, what you tried, and what you would try next.',
    })
  },
}

/** What the agent knows about the repository: layout, commands, conventions. */
export const repository = {
  name: 'repository',
  inject: ['systemPrompt'],
  apply(ctx: Context) {
    const prompt = ctx.systemPrompt
    const order = prompt.getSectionOrder('FILE_REFERENCE')
    prompt.section({
      name: 'repo:layout',
      order,
      text:
        'The repository is a Node 20 web service written in strict TypeScript (ESM only). Layout:\n' +
        '- src/server.ts starts the HTTP server and mounts the routers.\n' +
        '- src/auth/ holds login, logout, sessions and password hashing (login.ts, session.ts, password.ts).\n' +
        '- src/db/ is the data layer: one file per table, all queries through src/db/client.ts.\n' +
        '- src/http/ holds the request helpers: cookies.ts, errors.ts, validate.ts.\n' +
        '- test/ mirrors src/ one test file per module; test/helpers/ has the fake clock and the in-memory database.\n' +
        '- scripts/ holds maintenance scripts that are never imported by src/.',
    })
    prompt.section({
      name: 'repo:commands',
      order: order + 1,
      text:
        'Commands (run them from the repository root):\n' +
        '- npm test runs the whole vitest suite (about forty seconds).\n' +
        '- npx vitest run test/auth/login.test.ts runs one file; add -t "name" for one test.\n' +
        '- npm run typecheck runs tsc --noEmit over src/ and test/; it must stay clean.\n' +
        '- npm run lint runs eslint with the repository configuration; fix what it reports in the lines you touched.\n' +
        '- npm run db:reset rebuilds the local database from the migrations; tests do not need it.',
    })
    prompt.section({
      name: 'repo:conventions',
      order: order + 2,
      text:
        'Conventions: one concept per file, named in kebab-case after what it exports. Errors thrown to callers are instances of HttpError ' +
        'from src/http/errors.ts with a status and a message that names the offending input. Cookies are only ever set through setCookie ' +
        'in src/http/cookies.ts, which applies the Secure, HttpOnly and SameSite=Lax attributes; never write a Set-Cookie header by hand. ' +
        'Time comes from the injected clock, never from Date.now(), so tests can control it. Tests use the in-memory database and the ' +
        'fake clock from test/helpers/ and never touch the network.',
    })
    prompt.section({
      name: 'repo:auth',
      order: order + 3,
      text:
        'How login works: POST /login validates the body with src/http/validate.ts, looks the user up by email, and checks the password with ' +
        'verifyPassword (argon2id, in src/auth/password.ts). On success it creates a session row (src/auth/session.ts) that expires after ' +
        'fourteen days and answers 204 with the session id in the "session" cookie; on failure it answers 401 with the same message whether ' +
        'the email or the password was wrong, so the response does not reveal which accounts exist. Every other route reads the cookie ' +
        'through requireSession in src/auth/session.ts, which answers 401 for a missing, unknown or expired session and renews a session ' +
        'that expires within a day. POST /logout deletes the session row and clears the cookie with maxAge 0.',
    })
    prompt.section({
      name: 'repo:testing',
      order: order + 4,
      text:
        'Testing: every route test builds its app with createTestApp from test/helpers/app.ts, which wires the in-memory database, the fake ' +
        'clock at 2024-01-01T00:00:00Z and a request helper whose responses expose status, headers, body and the parsed cookies. ' +
        'A test that needs time to pass calls app.clock.advance(ms). Name a test for the behaviour it checks, and add the reason in ' +
        'parentheses when it helps. When you fix a bug, first make sure a test fails because of it; add one when none does.',
    })
  },
}

/** File tools: read, edit, write. */
export const files = {
  name: 'files',
  inject: ['systemPrompt'],
  apply(ctx: Context) {
    const prompt = ctx.systemPrompt
    prompt.section({
      name: 'tools:read',
      order: prompt.getSectionOrder('TOOL_READ'),
      text:
        'Use read to look at a file before you change it; it returns the file with line numbers. Read whole files unless they are longer than ' +
        'four hundred lines, then read the region you need. Do not read files under node_modules/ or dist/: they are generated.',
    })
    prompt.section({
      name: 'tools:edit',
      order: prompt.getSectionOrder('TOOL_EDIT'),
      text:
        'Use edit to change a file: give the exact text to replace, with enough surrounding lines to make it unique, and the new text. ' +
        'An edit whose old text is not found fails without changing anything; read the file again before you retry. ' +
        'Use write only for new files. Keep the existing formatting: two-space indentation, single quotes, no semicolons.',
    })
    prompt.tools(() => ({
      schemas: [
        tool('read', 'Read a file of the repository and return its contents with line numbers.', { path: { type: 'string', description: 'The path relative to the repository root.' } }, ['path']),
        tool(
          'edit',
          'Replace one exact, unique occurrence of a text in a file with a new text.',
          {
            path: { type: 'string', description: 'The path relative to the repository root.' },
            old_text: { type: 'string', description: 'The text to replace, exactly as it appears in the file.' },
            new_text: { type: 'string', description: 'The text to put in its place.' },
          },
          ['path', 'old_text', 'new_text'],
        ),
        tool(
          'write',
          'Create a new file with the given contents; fails when the file exists.',
          { path: { type: 'string', description: 'The path relative to the repository root.' }, contents: { type: 'string', description: 'The whole file.' } },
          ['path', 'contents'],
        ),
      ],
    }))
  },
}

/** The shell tool. */
export const shell = {
  name: 'shell',
  inject: ['systemPrompt'],
  apply(ctx: Context) {
    const prompt = ctx.systemPrompt
    prompt.section({
      name: 'tools:bash',
      order: prompt.getSectionOrder('TOOL_BASH'),
      text:
        'Use bash to run tests, the type checker and git. Each call runs in a fresh shell in the repository root with a ten-minute limit; ' +
        'output longer than two hundred lines is cut in the middle. Prefer the npm scripts over calling tools directly. ' +
        'Do not use bash to read or edit files: the read and edit tools keep a record the reviewers rely on.',
    })
    prompt.tools(() => ({
      schemas: [tool('bash', 'Run a shell command in the repository root and return its exit code and output.', { command: { type: 'string', description: 'The command line.' } }, ['command'])],
    }))
  },
}

/** Code search: a plugin the harness loads when the agent first needs to search. */
export const search = {
  name: 'search',
  inject: ['systemPrompt'],
  apply(ctx: Context) {
    const prompt = ctx.systemPrompt
    prompt.section({
      name: 'tools:grep',
      order: prompt.getSectionOrder('TOOL_GREP'),
      text:
        'Use grep to find where a name is defined or used before you read whole directories. Patterns are regular expressions; ' +
        'restrict the search to src/ or test/ when you can, since scripts/ and the fixtures are large.',
    })
    prompt.tools(() => ({
      schemas: [
        tool(
          'grep',
          'Search the repository for a regular expression and return the matching lines with their paths and line numbers.',
          { pattern: { type: 'string', description: 'The regular expression.' }, path: { type: 'string', description: 'A directory to search in (default the root).' } },
          ['pattern'],
        ),
      ],
    }))
  },
}

/** The runtime context: what the harness shows the agent about the workspace each step. */
export const runtimeContext = {
  name: 'runtime-context',
  inject: ['systemPrompt'],
  apply(ctx: Context) {
    const prompt = ctx.systemPrompt
    prompt.variable('branch', workspace.branch)
    prompt.context({ name: 'git', order: 100, text: () => `Branch ${workspace.branch.value}; git status: ${workspace.gitStatus.value}.` })
    prompt.context({ name: 'open-files', order: 110, text: () => `Open files: ${workspace.openFiles.value.join(', ') || 'none'}.` })
  },
}

const FILES: Record<string, string> = {
  'test/auth/login.test.ts': [
    "import { describe, expect, test } from 'vitest'",
    "import { createTestApp } from '../helpers/app.js'",
    '',
    "describe('POST /login', () => {",
    "  test('a correct password sets the session cookie', async () => {",
    '    const app = await createTestApp()',
    "    await app.db.users.insert({ email: 'ada@example.com', password: 'correct horse' })",
    "    const response = await app.post('/login', { email: 'ada@example.com', password: 'correct horse' })",
    '    expect(response.status).toBe(204)',
    "    expect(response.cookies.session, 'expected a session cookie').toBeDefined()",
    '  })',
    '',
    "  test('a wrong password is a 401 and sets no cookie', async () => {",
    '    const app = await createTestApp()',
    "    await app.db.users.insert({ email: 'ada@example.com', password: 'correct horse' })",
    "    const response = await app.post('/login', { email: 'ada@example.com', password: 'battery staple' })",
    '    expect(response.status).toBe(401)',
    '    expect(response.cookies.session).toBeUndefined()',
    '  })',
    '})',
  ].join('\n'),
  'src/auth/login.ts': [
    "import { HttpError } from '../http/errors.js'",
    "import { verifyPassword } from './password.js'",
    "import { createSession } from './session.js'",
    "import type { Handler } from '../http/handler.js'",
    '',
    'export const login: Handler = async (request, reply, { db, clock }) => {',
    '  const { email, password } = request.body',
    '  const user = await db.users.byEmail(email)',
    "  if (user === undefined || !(await verifyPassword(password, user.passwordHash))) throw new HttpError(401, 'wrong email or password')",
    '  const session = await createSession(db, user.id, clock.now())',
    "  reply.header('x-session', session.id)",
    '  reply.status(204)',
    '}',
  ].join('\n'),
  'src/auth/session.ts': [
    "import type { Db } from '../db/client.js'",
    '',
    'const DAY = 24 * 60 * 60 * 1000',
    '',
    'export interface Session { readonly id: string; readonly userId: string; readonly expiresAt: number }',
    '',
    'export async function createSession(db: Db, userId: string, now: number): Promise<Session> {',
    '  const session = { id: crypto.randomUUID(), userId, expiresAt: now + 14 * DAY }',
    '  await db.sessions.insert(session)',
    '  return session',
    '}',
  ].join('\n'),
}

/** What the harness answers a tool call with (the workspace is scripted: the same call, the same output). */
export function runTool(name: string, input: Record<string, unknown>): string {
  if (name === 'read') {
    const path = String(input.path)
    workspace.openFiles.value = [...new Set([...workspace.openFiles.value, path])]
    const text = FILES[path]
    return text === undefined ? `error: no file ${path}` : text.split('\n').map((line, index) => `${String(index + 1).padStart(3)}  ${line}`).join('\n')
  }
  if (name === 'grep') {
    return [
      "src/http/cookies.ts:12:export function setCookie(reply: Reply, name: string, value: string, options: CookieOptions = {}): void {",
      "src/auth/logout.ts:9:  setCookie(reply, 'session', '', { maxAge: 0 })",
      "test/http/cookies.test.ts:8:  test('setCookie applies Secure, HttpOnly and SameSite=Lax', () => {",
    ].join('\n')
  }
  if (name === 'edit') {
    workspace.gitStatus.value = `1 file modified (${String(input.path)})`
    return `edited ${String(input.path)}: 1 replacement`
  }
  if (name === 'bash') {
    return [
      ' RUN  v4.1.12 /work/repo',
      '',
      ' ✓ test/auth/login.test.ts (2 tests) 41ms',
      '',
      ' Test Files  1 passed (1)',
      '      Tests  2 passed (2)',
      '   Duration  612ms',
      'exit code 0',
    ].join('\n')
  }
  return `error: unknown tool ${name}`
}
