import assert from 'node:assert/strict';
import { pidsCgroupDir } from '../../../src/runner/sandbox/host';

describe('sandbox host: the pids cgroup this process is in', () => {
  it('at the hierarchy’s root, the controller’s own folder (no trailing slash)', () => {
    assert.equal(pidsCgroupDir('9:name=systemd:/\n8:pids:/\n4:memory:/x\n0::/\n'), '/sys/fs/cgroup/pids');
  });

  it('below it, the folder the line names, whichever controllers share the hierarchy', () => {
    assert.equal(pidsCgroupDir('3:cpu,pids:/docker/abc\n'), '/sys/fs/cgroup/pids/docker/abc');
    assert.equal(pidsCgroupDir('5:pids:/user.slice/user-0.slice\n'), '/sys/fs/cgroup/pids/user.slice/user-0.slice');
  });

  it('none under cgroup v2 alone, or when no line names pids', () => {
    assert.equal(pidsCgroupDir('0::/user.slice\n'), null);
    assert.equal(pidsCgroupDir('4:memory:/pids\n'), null);
  });
});
