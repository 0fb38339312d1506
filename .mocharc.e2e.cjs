// The e2e tier; its files in the order test/support/specOrder.cjs gives.
const { specFiles } = require('./test/support/specOrder.cjs');

module.exports = {
  spec: specFiles('e2e'),
  'node-option': ['import=tsx'],
  extension: ['ts'],
  timeout: 180000,
  slow: 20000,
  parallel: true,
  jobs: 2,
  reporter: 'test/support/reporter.cjs',
  require: ['test/e2e/rootHooks.ts'],
};
