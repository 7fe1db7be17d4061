/**
 * Builds the report renderer (labextension/src/report/standalone.ts and what
 * it imports: the same modules the JupyterLab extension draws with) into one
 * plain browser script, jupyter_perf/render/static/report-renderer.js, for
 * pages without JupyterLab: the standalone export and nbconvert's HTML
 * (jupyter_perf/render/standalone.py inlines it after BokehJS).
 *
 * Rspack is the bundler jupyter-builder already brings (package.json
 * resolutions pin it); its built-in SWC loader strips the types (tsc has
 * checked them). `jlpm build:lib` runs this; the output is not checked in
 * (.gitignore) and the wheel includes it (pyproject.toml).
 */
const path = require('path');
const { rspack } = require('@rspack/core');

const ROOT = path.resolve(__dirname, '..');

const config = {
  mode: 'production',
  context: ROOT,
  entry: path.join(ROOT, 'labextension', 'src', 'report', 'standalone.ts'),
  target: ['web', 'es2018'],
  devtool: false,
  output: {
    path: path.join(ROOT, 'jupyter_perf', 'render', 'static'),
    filename: 'report-renderer.js',
    iife: true,
    clean: false
  },
  resolve: { extensions: ['.ts', '.js', '.json'] },
  module: {
    rules: [
      {
        test: /\.ts$/,
        exclude: /node_modules/,
        loader: 'builtin:swc-loader',
        options: {
          jsc: { parser: { syntax: 'typescript' }, target: 'es2018' }
        },
        type: 'javascript/auto'
      }
    ]
  },
  optimization: { minimize: true },
  performance: { hints: false }
};

rspack(config, (err, stats) => {
  if (err) {
    console.error(err);
    process.exit(1);
  }
  if (stats.hasErrors()) {
    console.error(stats.toString({ all: false, errors: true }));
    process.exit(1);
  }
  const out = path.join(config.output.path, config.output.filename);
  console.log(`wrote ${path.relative(ROOT, out)}`);
});
