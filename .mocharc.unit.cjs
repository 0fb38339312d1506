// The unit tier; its files in the order test/support/specOrder.cjs gives.
const { specFiles } = require('./test/support/specOrder.cjs');

module.exports = {
  spec: specFiles('unit'),
  'node-option': ['import=tsx'],
  extension: ['ts'],
  timeout: 30000,
  reporter: 'test/support/reporter.cjs',
  require: ['test/support/rootHooks.ts'],
  parallel: true,
  jobs: 2,
};
