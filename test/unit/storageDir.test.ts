import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkpointStorageDir } from '../../src/storageDir';

describe('checkpoint storage folder', () => {
  let root: string;
  const ext = 'agent-waypoints.agent-waypoints';
  beforeEach(() => (root = fs.mkdtempSync(path.join(os.tmpdir(), 'aw-storage-'))));
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('is the workspace storage VS Code gives the first window', () => {
    for (const id of ['462c8963', '-3eace3c9', 'a8f0c3e1b7d94e2f8c6a5b4d3e2f1a0b']) {
      fs.mkdirSync(path.join(root, id));
      assert.equal(checkpointStorageDir(path.join(root, id, ext)), path.join(root, id, ext));
    }
  });

  it('a second window of the same workspace (VS Code gave it "<id>-1") shares the first window\'s folder', () => {
    fs.mkdirSync(path.join(root, '462c8963'));
    fs.mkdirSync(path.join(root, '-3eace3c9'));
    assert.equal(checkpointStorageDir(path.join(root, '462c8963-1', ext)), path.join(root, '462c8963', ext));
    assert.equal(checkpointStorageDir(path.join(root, '462c8963-12', ext)), path.join(root, '462c8963', ext));
    assert.equal(checkpointStorageDir(path.join(root, '-3eace3c9-2', ext)), path.join(root, '-3eace3c9', ext));
  });

  it('keeps the given folder when there is no first folder to share', () => {
    assert.equal(checkpointStorageDir(path.join(root, '462c8963-1', ext)), path.join(root, '462c8963-1', ext));
    assert.equal(checkpointStorageDir(path.join(root, '-1', ext)), path.join(root, '-1', ext));
  });
});
