// The int tier; its files in the order test/support/specOrder.cjs gives.
const { specFiles } = require('./test/support/specOrder.cjs');

module.exports = {
  spec: specFiles('int'),
  'node-option': ['import=tsx'],
  extension: ['ts'],
  timeout: 30000,
  parallel: true,
  jobs: 2,
  reporter: 'test/support/reporter.cjs',
  require: ['test/support/rootHooks.ts'],
};
