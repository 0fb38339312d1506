// Mocha reporter used by every suite: spec output on the console, plus a JSON
// results file (path in AW_RESULTS_FILE or reporterOptions.output) that the
// test orchestrator sums, and that the code-server harness reads back from disk
// because the in-host suite's console is the extension host's, not ours.
const fs = require('node:fs');
const path = require('node:path');
const Mocha = require('mocha');

const { EVENT_TEST_PASS, EVENT_TEST_FAIL, EVENT_TEST_PENDING, EVENT_RUN_END, EVENT_HOOK_END } = Mocha.Runner.constants;

/** A hook slower than this is printed with its time: a workbench or a cluster started in a hook is where a suite's time goes unseen. */
const SLOW_HOOK_MS = 2000;

class ResultsReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const output =
      (options && options.reporterOptions && options.reporterOptions.output) || process.env.AW_RESULTS_FILE;
    const tests = [];
    const record = (state) => (test, err) =>
      tests.push({
        title: test.fullTitle(),
        file: test.file ? path.relative(process.cwd(), test.file) : undefined,
        state,
        durationMs: test.duration ?? 0,
        error: err ? { message: String(err.message ?? err), stack: String(err.stack ?? '') } : undefined,
      });
    runner.on(EVENT_TEST_PASS, record('passed'));
    runner.on(EVENT_TEST_FAIL, record('failed'));
    runner.on(EVENT_TEST_PENDING, record('pending'));
    runner.on(EVENT_HOOK_END, (hook) => {
      if ((hook.duration ?? 0) >= SLOW_HOOK_MS) console.log(`    ⏱ ${hook.title} (${hook.duration}ms)`);
    });
    runner.once(EVENT_RUN_END, () => {
      if (!output) return;
      const count = (s) => tests.filter((t) => t.state === s).length;
      const summary = { passed: count('passed'), failed: count('failed'), pending: count('pending'), tests };
      fs.mkdirSync(path.dirname(output), { recursive: true });
      fs.writeFileSync(output, JSON.stringify(summary, null, 2));
    });
  }
}

module.exports = ResultsReporter;
