// The program's entry (dist/cli.js): runs the command, then leaves with its exit code once the
// stores are closed (a shared store's pool or a timer must not keep the process alive).
import { main } from './main';

void main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`agent-waypoints: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
