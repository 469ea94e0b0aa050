import { cleanupLeftovers, listClusterStates } from './host-state.js';

/**
 * `node dist/test/cluster/cleanup.js`: removes what test clusters whose test
 * process died (SIGKILL, power loss) left behind, and restores the host
 * settings once no cluster is left. Live clusters are not touched.
 * The next cluster start does the same on its own.
 */
const before = listClusterStates().length;
const problems = cleanupLeftovers();
const after = listClusterStates().length;
for (const problem of problems) process.stderr.write(`test cluster cleanup: ${problem}\n`);
process.stdout.write(
  `test cluster cleanup: ${before - after} leftover cluster(s) removed, ${after} live cluster(s) left alone\n`,
);
process.exitCode = problems.length > 0 ? 1 : 0;
