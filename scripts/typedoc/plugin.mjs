// TypeDoc plugin for promptloom's API reference. Everything it does is driven
// by options in typedoc.json, keyed by public export names, so the reference
// follows the public API and not the files behind it:
//
// - apiLanding, apiLandingEnd: the landing page is the first part of the
//   README, up to an end marker (a fallback cut when the marker is absent);
// - apiModules: each entry point is named by its import specifier
//   (`promptloom`, `promptloom/node`, …) instead of its file name;
// - apiGroups: the exports are grouped by task, in the configured order; an
//   export in no group is a warning (an error under treatWarningsAsErrors);
// - members a class inherits from a dependency (SystemPrompt's Cordis
//   `Service` statics and symbols) are left out: they are Cordis' API.
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import {
  Converter,
  MinimalSourceFile,
  ParameterType,
  ReflectionGroup,
  ReflectionKind,
} from 'typedoc'

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.options.addDeclaration({
    name: 'apiLanding',
    help: 'promptloom: the markdown file whose first part (up to apiLandingEnd) is the landing page.',
    type: ParameterType.Path,
  })
  app.options.addDeclaration({
    name: 'apiLandingEnd',
    help: 'promptloom: the marker that ends the landing part of apiLanding.',
    type: ParameterType.String,
    defaultValue: '<!-- api-landing-end -->',
  })
  app.options.addDeclaration({
    name: 'apiLandingFallbackLines',
    help: 'promptloom: without the marker, the landing part ends at the first "## " heading from this line on.',
    type: ParameterType.Number,
    defaultValue: 80,
  })
  app.options.addDeclaration({
    name: 'apiModules',
    help: 'promptloom: module display names by TypeDoc module name, e.g. { "node": "promptloom/node" }.',
    type: ParameterType.Mixed,
    defaultValue: {},
  })
  app.options.addDeclaration({
    name: 'apiGroups',
    help: 'promptloom: ordered [{ title, description, exports: [export names in display order] }].',
    type: ParameterType.Mixed,
    defaultValue: [],
  })

  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    const { project } = context
    renameModules(app, project)
    hideExternalInheritedMembers(project)
    addLanding(app, project)
  })
  // After TypeDoc's GroupPlugin (priority -100) has grouped every container.
  app.converter.on(Converter.EVENT_RESOLVE_END, (context) => regroup(app, context.project), -200)
}

/** The top-level modules (or the project itself when there is a single entry point). */
function modulesOf(project) {
  const modules = (project.children ?? []).filter((child) => child.kindOf(ReflectionKind.Module))
  return modules.length > 0 ? modules : [project]
}

function renameModules(app, project) {
  const names = objectOption(app, 'apiModules')
  for (const module of modulesOf(project)) {
    if (module === project) continue
    const name = names[module.name]
    if (typeof name === 'string') module.name = name
    else if (!Object.values(names).includes(module.name)) {
      app.logger.warn(`apiModules (typedoc.json) has no name for the module "${module.name}"; add its import specifier`)
    }
  }
}

/** Members a class inherits from a dependency are that dependency's API, not promptloom's. */
function hideExternalInheritedMembers(project) {
  for (const reflection of Object.values(project.reflections)) {
    if (!reflection.kindOf(ReflectionKind.Class)) continue
    for (const member of [...(reflection.children ?? [])]) {
      if (member.flags.isInherited && member.flags.isExternal) project.removeReflection(member)
    }
  }
}

function addLanding(app, project) {
  const file = app.options.getValue('apiLanding')
  if (!file) return
  const marker = app.options.getValue('apiLandingEnd')
  const { text, cut } = landingText(readFileSync(file, 'utf8'), marker, app.options.getValue('apiLandingFallbackLines'))
  if (!cut) app.logger.verbose(`apiLanding: ${file} has no "${marker}" marker; the landing page has its first ${text.split('\n').length} lines`)
  // The page is titled with the project's name already: drop the README's own `# title`.
  const content = rewriteAnchors(text.replace(/^# [^\n]*\n+/, ''), repositoryUrl(dirname(file)))
  project.readme = app.converter.parseRawComment(new MinimalSourceFile(content, file), project.files).content
  project.files.registerReflectionPath(file, project)
}

/**
 * The landing part of a README: the text before `endMarker`; without one, the
 * text before the first `## ` heading at or after line `fallbackLines` (so no
 * section or code fence is cut in half), or the whole file.
 */
export function landingText(source, endMarker, fallbackLines) {
  if (typeof endMarker === 'string' && endMarker !== '') {
    const at = source.indexOf(endMarker)
    if (at !== -1) return { text: source.slice(0, at).trimEnd() + '\n', cut: true }
  }
  const lines = source.split('\n')
  let fenced = false
  for (let i = 0; i < lines.length; i++) {
    if (/^\s*(```|~~~)/.test(lines[i])) fenced = !fenced
    if (!fenced && i >= fallbackLines && /^## /.test(lines[i])) {
      return { text: lines.slice(0, i).join('\n').trimEnd() + '\n', cut: false }
    }
  }
  return { text: source, cut: false }
}

/** The package's repository home page (for anchors into the part of the README the landing leaves out). */
function repositoryUrl(dir) {
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  const url = typeof pkg.homepage === 'string' ? pkg.homepage : typeof pkg.repository?.url === 'string' ? pkg.repository.url : ''
  return url.replace(/^git\+/, '').replace(/\.git$/, '').replace(/#.*$/, '')
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
function headingSlug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')
}

/** In-page links to headings the landing text does not contain point at the full README instead. */
function rewriteAnchors(text, repository) {
  const anchors = new Set()
  let fenced = false
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced
    const heading = !fenced && /^#{1,6}\s+(.*)$/.exec(line)
    if (heading) anchors.add(headingSlug(heading[1]))
  }
  return text.replace(/\]\(#([^)\s]+)\)/g, (link, anchor) =>
    anchors.has(anchor) || repository === '' ? link : `](${repository}#${anchor})`,
  )
}

/** Replaces each module's groups with the configured task groups, in the configured order. */
function regroup(app, project) {
  const groups = app.options.getValue('apiGroups')
  if (!Array.isArray(groups) || groups.length === 0) return
  const malformed = groups.find((group) => typeof group?.title !== 'string' || !Array.isArray(group.exports))
  if (malformed !== undefined) {
    app.logger.error(`apiGroups (typedoc.json): every group is { title, description?, exports: [names] }; got ${JSON.stringify(malformed)}`)
    return
  }
  const rank = new Map()
  groups.forEach((group, g) => group.exports.forEach((name, i) => rank.has(name) || rank.set(name, [g, i])))
  const unused = new Set(rank.keys())
  for (const module of modulesOf(project)) {
    const children = module.childrenIncludingDocuments ?? []
    for (const child of children) unused.delete(child.name)
    const byGroup = groups.map((group) => {
      const reflectionGroup = new ReflectionGroup(group.title, module)
      if (typeof group.description === 'string') reflectionGroup.description = [{ kind: 'text', text: group.description }]
      return reflectionGroup
    })
    for (const child of children) {
      const at = rank.get(child.name)
      if (at === undefined) {
        app.logger.warn(`${module.name} exports "${child.name}", which is in no apiGroups group (typedoc.json); add it to the group of its task`)
        continue
      }
      byGroup[at[0]].children.push(child)
    }
    for (const group of byGroup) group.children.sort((a, b) => rank.get(a.name)[1] - rank.get(b.name)[1])
    module.groups = byGroup.filter((group) => group.children.length > 0)
    module.categories = undefined
  }
  // Names that are no longer exported are harmless (the build follows the public API); list them for cleanup.
  if (unused.size > 0) app.logger.verbose(`apiGroups names no module exports: ${[...unused].join(', ')}`)
}

function objectOption(app, name) {
  const value = app.options.getValue(name)
  return typeof value === 'object' && value !== null ? value : {}
}
