export interface TestResult {
  title: string;
  state: 'passed' | 'failed' | 'pending';
  durationMs: number;
  error?: { message: string; stack: string };
}

export interface SuiteResults {
  passed: number;
  failed: number;
  pending: number;
  tests: TestResult[];
}

/** Prints a results file the way mocha's spec reporter would have, for suites run elsewhere. */
export function printResults(name: string, r: SuiteResults): void {
  for (const t of r.tests) {
    const mark = t.state === 'passed' ? '✔' : t.state === 'failed' ? '✘' : '-';
    console.log(`  ${mark} ${t.title}${t.durationMs > 200 ? ` (${t.durationMs} ms)` : ''}`);
  }
  for (const t of r.tests.filter((x) => x.state === 'failed')) {
    console.log(`\n  ✘ ${t.title}\n    ${t.error?.stack ?? t.error?.message ?? ''}`.replace(/\n/g, '\n    '));
  }
  console.log(`\n  ${name}: ${r.passed} passing, ${r.failed} failing, ${r.pending} pending`);
}
