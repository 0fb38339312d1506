// *Check sandbox* on this machine, which has bubblewrap (the tools install puts it there): both
// probes start a real command, with and without network, and the description says what it found.
import assert from 'node:assert/strict';
import { checkSandbox, describeCheck } from '../../../src/runner/sandbox';

describe('checkSandbox (real bubblewrap)', () => {
  it('probes a command with and without network and describes what it found', async () => {
    const c = await checkSandbox();
    assert.equal(c.available, true, describeCheck(c));
    assert.equal(c.probe?.ok, true);
    assert.equal(c.networkProbe?.ok, true, c.networkProbe?.error ?? '');
    assert.equal(c.install, null);
    assert.equal(
      c.processLimit,
      process.getuid?.() === 0 ? (c.processLimit === 'cgroup' ? 'cgroup' : 'none') : 'rlimit',
    );
    const text = describeCheck(c);
    assert.match(text, /^Sandbox: available \(\d+ ms to start a command\)\./);
    assert.match(text, /bubblewrap: bubblewrap [\d.]+ at \/usr\/bin\/bwrap/);
    assert.match(text, /perl \(the network helper\): \/usr\/bin\/perl/);
  });
});
