/**
 * Writes jupyter_perf/render/js/format.js from labextension/src/format.ts: the
 * sidebar's formatter as a plain browser script, so the report's browser code
 * (render/js/report.js, main.js, inlined into every report by render/report.py)
 * formats with the same code as the sidebar instead of a copy of it.
 *
 * The module is transpiled by TypeScript (CommonJS, no type checking: tsc has
 * done that) and wrapped so that it defines one constant, `JPF`, holding its
 * exports. The file is checked in, so the Python package needs no Node; `jlpm
 * build` writes it again, and `node labextension/format-js.js --check` (run
 * by the jest specs) fails when it is not what format.ts gives.
 */
const fs = require('fs');
const path = require('path');
const ts = require('typescript');

const ROOT = path.resolve(__dirname, '..');
const SOURCE = path.join(ROOT, 'labextension', 'src', 'format.ts');
const TARGET = path.join(ROOT, 'jupyter_perf', 'render', 'js', 'format.js');

function formatJs(source) {
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2017,
      removeComments: true,
      newLine: ts.NewLineKind.LineFeed
    }
  });
  return [
    '// GENERATED from labextension/src/format.ts by labextension/format-js.js (`jlpm build`).',
    '// Do not edit: change format.ts. JPF holds its exports (formatDuration, formatBytes, ...).',
    'const JPF = ((exports) => {',
    outputText.trimEnd(),
    'return exports;',
    '})({});',
    ''
  ].join('\n');
}

function main(argv) {
  const text = formatJs(fs.readFileSync(SOURCE, 'utf8'));
  const rel = path.relative(ROOT, TARGET);
  if (argv.includes('--check')) {
    const current = fs.existsSync(TARGET)
      ? fs.readFileSync(TARGET, 'utf8')
      : '';
    if (current !== text) {
      console.error(
        `${rel} is not format.ts built: run \`jlpm build:formatjs\``
      );
      return 1;
    }
    return 0;
  }
  fs.writeFileSync(TARGET, text);
  return 0;
}

if (require.main === module) {
  process.exitCode = main(process.argv.slice(2));
}

module.exports = { formatJs };
