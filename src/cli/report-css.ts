/** The report's inline stylesheet: system fonts, light and dark schemes, no external resources. */
export const REPORT_CSS = `
:root {
  --bg: #f6f7f9; --panel: #fff; --ink: #1c2230; --muted: #6b7385; --line: #e3e6ec;
  --stable: #2f6fdb; --reusable: #12a17a; --observed: #d9730d; --shared: #7c4ddb;
  --add-bg: #e3f6ea; --add: #17703c; --rm-bg: #fde8e8; --rm: #b42323; --ch-bg: #fff4d6; --ch: #8a5a00;
  --wh-bg: #ece8fb; --wh: #5b3bb8;
  color-scheme: light dark;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #12151c; --panel: #1a1f29; --ink: #e4e8f0; --muted: #8d96a8; --line: #2b3240;
    --add-bg: #173524; --add: #7fd7a0; --rm-bg: #3d1d1f; --rm: #f19a9a; --ch-bg: #3a2f14; --ch: #f0c56b;
    --wh-bg: #2a2340; --wh: #b9a5f5;
  }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; }
code, pre, .chip, .cause, .num, .node-parts .part { font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, monospace; }
header.page, main, footer.page { max-width: 1480px; margin: 0 auto; padding: 0 24px; }
header.page { padding-top: 22px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 0 0 8px; }
h2 a, a.anchor { color: inherit; text-decoration: none; }
.sub, .file, .muted, .figures-line { color: var(--muted); }
.sub code, .file code { font-size: 12px; }
.file { margin: -4px 0 10px; overflow-wrap: anywhere; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 16px 18px; margin: 16px 0; }
.overview { display: grid; grid-template-columns: repeat(auto-fit, minmax(380px, 1fr)); gap: 16px; }
.overview .panel, .chart-wrap { margin: 0; }
.figures { display: flex; flex-wrap: wrap; gap: 6px 22px; margin: 0 0 8px; }
.figures div { min-width: 0; }
.figures dt { font-size: 11px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
.figures dd { margin: 0; font-weight: 600; }
svg.chart { width: 100%; height: auto; display: block; }
svg .grid line, line.grid { stroke: var(--line); stroke-width: 1; }
svg .axis { fill: var(--muted); font-size: 11px; }
.stable { --series: var(--stable); }
.reusable { --series: var(--reusable); }
.observed { --series: var(--observed); }
.shared { --series: var(--shared); }
svg .line { fill: none; stroke-width: 2; stroke: var(--series); }
svg .line.reusable { stroke-dasharray: 5 4; }
svg .point { fill: var(--series); stroke: var(--panel); stroke-width: 1; }
svg .point.first { fill: var(--panel); stroke: var(--stable); stroke-width: 1.5; }
svg line.compacted { stroke: var(--muted); stroke-dasharray: 2 3; }
.legend { display: flex; flex-wrap: wrap; gap: 14px; font-size: 12px; color: var(--muted); margin-top: 4px; }
.legend i { display: inline-block; width: 14px; height: 3px; vertical-align: middle; margin-right: 6px; border-radius: 2px; }
.legend i, .bar span { background: var(--series); }
.key.observed i { height: 8px; width: 8px; transform: rotate(45deg); }
.shared .big { font-size: 26px; font-weight: 650; margin: 0 0 6px; }
.shared .unit { font-size: 14px; color: var(--muted); font-weight: 400; }
.shares { list-style: none; padding: 0; margin: 0 0 8px; }
.shares li { display: grid; grid-template-columns: 150px 160px 64px 1fr; gap: 10px; align-items: center; padding: 3px 0; }
.shares .name { font-weight: 600; overflow-wrap: anywhere; }
.shares .cont { color: var(--muted); font-size: 12px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
details pre { white-space: pre-wrap; background: var(--bg); border-radius: 6px; padding: 10px; font-size: 12px; max-height: 320px; overflow: auto; }
.bar { display: inline-block; width: 70px; height: 8px; border-radius: 4px; background: var(--line); vertical-align: middle; margin-right: 8px; overflow: hidden; }
.bar span { display: block; height: 100%; border-radius: 4px; }
.shares .bar { width: 100%; }
table.steps { width: 100%; border-collapse: collapse; font-size: 13px; }
table.steps th { text-align: left; font-weight: 600; color: var(--muted); font-size: 11px; text-transform: uppercase; letter-spacing: .04em;
  border-bottom: 1px solid var(--line); padding: 6px 8px; position: sticky; top: 0; background: var(--panel); }
table.steps td { border-bottom: 1px solid var(--line); padding: 6px 8px; vertical-align: top; }
table.steps tr.quiet td { color: var(--muted); }
table.steps .n { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
td.prefix { white-space: nowrap; }
.num { font-size: 12px; }
.chip { display: inline-block; font-size: 12px; padding: 1px 7px; margin: 1px 4px 1px 0; border-radius: 10px; white-space: nowrap; }
.chip.added, pre.diff .line.added { background: var(--add-bg); color: var(--add); }
.chip.removed, pre.diff .line.removed { background: var(--rm-bg); color: var(--rm); }
.chip.changed { background: var(--ch-bg); color: var(--ch); }
.chip.withheld, .chip.agent { background: var(--wh-bg); color: var(--wh); }
.chip.restored { background: var(--add-bg); color: var(--add); border: 1px dashed var(--add); }
.label { font-size: 11px; color: var(--muted); margin-right: 4px; text-transform: uppercase; letter-spacing: .04em; }
.label:not(:first-child) { margin-left: 6px; }
.badge { display: inline-block; font-size: 10px; padding: 0 6px; margin-left: 6px; border-radius: 8px; background: var(--line); color: var(--muted); text-transform: uppercase; }
.badge.over { background: var(--rm-bg); color: var(--rm); margin-left: 0; }
ul.warnings { margin: 0; padding-left: 16px; }
li.warning { color: var(--ch); }
.short { color: var(--rm); }
tbody.run:not(:has(input.expand:checked)):not(:has(tr:target)) tr.step-row { display: none; }
tr.run-toggle td { background: var(--bg); color: var(--muted); font-size: 12px; padding: 4px 8px; }
tr.run-toggle label { cursor: pointer; display: block; }
tr.run-toggle input { vertical-align: middle; margin: 0 6px 0 0; }
tbody.run:has(input.expand:checked) .fold::after { content: " (shown)"; }
tr.step-row:target td { background: var(--ch-bg); }
tr.step-row { scroll-margin-top: 36px; }
td.usage { min-width: 220px; }
a.anchor:hover { text-decoration: underline; }
tr.step-row.lost td { border-bottom-color: transparent; }
td.why-cell { min-width: 230px; }
.why-cell code { font-size: 12px; margin-right: 4px; overflow-wrap: anywhere; }
.why-cell code.variable { white-space: nowrap; }
.why-cell .layer { font-size: 12px; margin-right: 4px; }
.cause { display: inline-block; font-size: 12px; padding: 1px 7px; margin: 1px 4px 1px 0; border-radius: 10px;
  background: var(--rm-bg); color: var(--rm); font-weight: 600; }
tr.why-row td { padding: 0 8px 10px; }
.why { border-left: 3px solid var(--rm); padding: 4px 0 2px 10px; }
.why-line { margin: 0 0 6px; }
pre.diff { margin: 0; font-size: 12px; background: var(--bg); border-radius: 6px; padding: 6px 0; max-height: 360px; overflow: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
pre.diff .line { display: block; padding: 0 10px; }
pre.diff .line.gap { color: var(--muted); font-style: italic; }
pre.diff mark { background: none; color: inherit; font-weight: 700; text-decoration: underline; text-underline-offset: 2px; }
ul.tree, ul.tree ul { list-style: none; margin: 0; padding-left: 0; }
ul.tree ul { padding-left: 22px; border-left: 2px solid var(--line); margin-left: 8px; }
li.node { margin: 6px 0; }
.node-head { display: flex; flex-wrap: wrap; gap: 6px 10px; align-items: baseline; }
.node-head .size { font-size: 12px; font-weight: 600; }
.node-parts { margin: 2px 0 0; font-size: 12px; color: var(--muted); }
.node-parts .part + .part::before { content: " · "; color: var(--line); }
.node-parts .layer { margin-left: 4px; font-size: 10px; padding: 0 5px; border-radius: 6px; background: var(--line); }
h3 { font-size: 14px; margin: 14px 0 6px; }
ul.splits { margin: 0; padding-left: 18px; }
li.split { margin: 3px 0; }
footer.page { color: var(--muted); font-size: 12px; padding-bottom: 28px; white-space: pre-line; }
`
