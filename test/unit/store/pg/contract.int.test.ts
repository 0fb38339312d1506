// The store's one contract suite, unchanged, against the PostgreSQL engine on a real server (the
// shared throwaway cluster): each test gets a workspace identity of its own, so it sees only its runs.
import { openPgStoreReady } from '../../../../src/store/pg/store';
import { freshWorkspace, sharedPostgres } from '../../../support/postgres';
import { contractSuite } from '../contract';
import { fileJournalContract } from '../contractFiles';

const postgres = () => {
  const url = sharedPostgres().url();
  const workspace = freshWorkspace('contract');
  return {
    open: (o?: object) => openPgStoreReady({ ...o, connectionString: url, workspace }),
    cleanup: () => undefined, // the cluster is deleted after the suite
  };
};

contractSuite('postgres', postgres);
fileJournalContract('postgres', postgres);
