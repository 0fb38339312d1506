import { errorMessage } from './common/errors';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import * as vscode from 'vscode';
import { registerApiKeyCommands } from './commands/apiKey';
import { registerApprovalCommands } from './commands/approvals';
import { registerCheckpointCommands } from './commands/checkpoints';
import { registerModelCommands } from './commands/models';
import { createActions } from './actions';
import type { RunViews } from './actions/ports';
import { registerRestoreCommands } from './commands/restore';
import type { CommandContext } from './commands/context';
import { registerCommand } from './commands/register';
import { registerSandboxCommands } from './commands/sandbox';
import { allowDomainsAlways, CommandApproval } from './commandApproval';
import { registerRunCommands } from './commands/runs';
import { registerWorkerCommands } from './commands/workers';
import { exportRun, registerTransferCommands } from './commands/transfer';
import { CommandIds, ContextKeys } from './contributes';
import { registerMcpCommands } from './commands/mcp';
import { McpService } from './editorMcp/service';
import { withExternalPolicy } from './runner/mcp/approvals';
import { DisposableStore, toDisposable } from './common/disposable';
import { ApiKeys, apiKeysForTests, type KeyTesting } from './models/apiKeys';
import { ModelProviders } from './models/providers';
import { AgentRunner } from './runner/runner';
import { localDecider } from './runner/decider';
import { WorkspaceIndex } from './runner/fileJournal/scanIndex';
import { watchWorkspaceFolder } from './workspaceWatcher';
import { createCodingRegistry, createFileFinder, type FileFinder } from './runner/tools';
import { findRipgrep } from './ripgrepPath';
import {
  isLocalEndpoint,
  readExcludes,
  readFileRules,
  readFilesExclude,
  readSettings,
  settingsPolicy,
} from './settings';
import { checkpointStorageDir, recordStorageDir } from './storageDir';
import { chooseStore } from './storeChoice';
import { registerSharedStoreCommands } from './commands/sharedStore';
import type { RestoreRecord } from './store/api/schema';
import type { CheckpointStore, OwnerInfo } from './store/api/types';
import { runViewEditor } from './views/run/actions';
import { RunViewPanels } from './views/run/panel';
import { ProposedDocuments } from './views/run/proposed';
import { threadRuns } from './views/run/thread';
import { openCheckpointDocument, registerCheckpointDocuments } from './views/checkpointDocument';
import { vscodeNotices } from './views/notices';
import { RunsTreeModel } from './views/runs/treeModel';
import { type RunsTreeProvider } from './views/runs/provider';
import { RunsView } from './views/runs/view';
import { reportStoreEvents } from './views/storeEvents';
import { vscodeRestoreEditor } from './views/restore/editor';
import { VersionDocuments } from './views/restore/preview';
import { RunSessions } from './views/session';
import { restoreOnStartup } from './views/startup';

/** What the extension returns from activate(); used by the in-host tests. */
export interface ExtensionApi {
  /** Folder of this workspace's checkpoint storage, or undefined when no folder is open. */
  readonly storageDir: string | undefined;
  /** Extension host process id (tests use it to simulate a crash). */
  readonly pid: number;
  readonly store: CheckpointStore | undefined;
  readonly runner: AgentRunner | undefined;
  readonly panels: RunViewPanels | undefined;
  readonly tree: RunsTreeProvider | undefined;
  /** How list_files and search_text reach the files: VS Code's ripgrep when found, else the Node engine. */
  readonly files: FileFinder | undefined;
  /** What the last command scan saw, kept current by VS Code's file watcher (the in-host test reads its work). */
  readonly scanIndex?: WorkspaceIndex;
  /** Resolves when activation-time work (interrupted-run detection) is done. */
  readonly ready: Promise<void>;
  /** MCP servers and VS Code's tools (undefined without a folder). */
  readonly mcp?: McpService;
  /** Only when VS Code runs the extension's tests (ExtensionMode.Test): set the key, answer the key question; restore with ticks. */
  readonly testing?: KeyTesting & {
    models: ModelProviders;
    /** Restore files with these ticks instead of the preview (the public command always previews). */
    restoreFiles?(
      target: { runId: string; seq: number },
      o: { rewind: boolean; ticked: string[] },
    ): Promise<RestoreRecord | undefined>;
  };
}

const FLUSH_TIMEOUT_MS = 3000;

/**
 * The composition root: builds every service once, owns every disposable, disposes them in
 * reverse order. extension.ts stays a two-liner around it. Activation reads the run index only;
 * no run's history is loaded until the user opens it.
 */
export class ExtensionRoot extends DisposableStore {
  readonly api: ExtensionApi;
  readonly log: vscode.LogOutputChannel;
  private readonly store: CheckpointStore | undefined;
  private readonly runner: AgentRunner | undefined;
  private readonly mcp: McpService | undefined;

  constructor(private readonly context: vscode.ExtensionContext) {
    super();
    const log = vscode.window.createOutputChannel('Agent Waypoints', { log: true });
    this.log = this.register(log);
    const storageDir = context.storageUri ? checkpointStorageDir(context.storageUri.fsPath) : undefined;
    const workspace = vscode.workspace.workspaceFolders?.[0];
    this.log.info(`activated (storage: ${storageDir ?? 'none, no folder open'})`);
    const testing =
      context.extensionMode === vscode.ExtensionMode.Test
        ? apiKeysForTests(context.secrets, context.globalState)
        : undefined;
    const keys = testing?.keys ?? new ApiKeys(context.secrets, context.globalState);
    this.register(registerApiKeyCommands(keys, this.log));
    this.register(registerCommand(CommandIds.showLog, () => this.log.show()));
    const approval = this.register(new CommandApproval(context.workspaceState));
    let sandboxChannel: vscode.OutputChannel | undefined;
    const channel = () =>
      (sandboxChannel ??= this.register(vscode.window.createOutputChannel('Agent Waypoints: Sandbox')));
    this.register(registerSandboxCommands(approval, channel));
    const models = new ModelProviders(keys, readSettings);
    const testingApi = testing ? { ...testing, models } : undefined;
    this.register(registerModelCommands(models, readSettings, this.log));
    void vscode.commands.executeCommand('setContext', ContextKeys.hasStorage, storageDir !== undefined);

    if (!storageDir || !workspace) {
      this.registerWithoutFolder();
      this.api = {
        storageDir,
        pid: process.pid,
        store: undefined,
        runner: undefined,
        panels: undefined,
        tree: undefined,
        files: undefined,
        ready: Promise.resolve(),
        ...(testingApi ? { testing: testingApi } : {}),
      };
      return;
    }

    // The command line finds this workspace's runs through this record (storageDir.ts).
    recordStorageDir(workspace.uri.fsPath, storageDir).catch((err) =>
      log.warn(`could not record where this workspace's runs are (for the command line): ${errorMessage(err)}`),
    );
    const owner: OwnerInfo = {
      owner_id: randomUUID(),
      label: `VS Code window “${vscode.workspace.name ?? workspace.name}”`,
      pid: process.pid,
      hostname: os.hostname(),
    };
    // The local store, or the shared one beside it (agentWaypoints.store.kind; storeChoice.ts).
    const { store, combined } = chooseStore({
      storageDir,
      workspaceRoot: workspace.uri.fsPath,
      secrets: context.secrets,
      log,
    });
    this.store = store;
    this.register(toDisposable(() => void store.close(FLUSH_TIMEOUT_MS)));
    this.register(reportStoreEvents(store, log));

    const files = this.fileFinder();
    // The command scans of every run share what the last one saw; the watcher says what to stat before a command.
    const watcher = this.register(watchWorkspaceFolder(workspace));
    const scanIndex = this.register(new WorkspaceIndex({ root: workspace.uri.fsPath, watcher }));
    const version = String(context.extension.packageJSON.version);
    const mcp = this.register(new McpService(workspace, context.secrets, this.log, version));
    this.mcp = mcp;
    const registry = createCodingRegistry({ files, fileRules: () => readFileRules(), providers: mcp.providers });
    const runner = new AgentRunner({
      store,
      provider: (model, adapter) => models.create(model, adapter),
      tools: registry,
      policy: withExternalPolicy(settingsPolicy(approval), () => mcp.allowList.policy()),
      workspaceRoot: workspace.uri.fsPath,
      storageDir,
      owner,
      decidedBy: localDecider(owner.hostname, 'window', vscode.env.sessionId),
      extensionVersion: version,
      defaultModel: () => readSettings().model,
      defaultBudget: () => readSettings().budget,
      outputCap: () => readSettings().outputCapBytes,
      context: () => readSettings().context,
      files: { index: scanIndex, exclude: readFilesExclude },
    });
    this.runner = runner;
    this.register(toDisposable(() => void runner.shutdown(FLUSH_TIMEOUT_MS)));

    const proposed = this.register(new ProposedDocuments({ storageDir }));
    const versions = this.register(new VersionDocuments((runId, hash) => store.getBlob(runId, hash)));
    // The run views and sessions are built below; the actions call them only later, on a click.
    const views: RunViews = {
      show: (runId, at) => panels.show(runId, at),
      track: (run, title) => sessions.track(run, title),
      openCheckpoint: (runId, seq) => openCheckpointDocument(runId, seq),
    };
    const actions = createActions({
      store,
      runner,
      owner,
      scope: { workspaceRoot: workspace.uri.fsPath, storageDir },
      trusted: () => vscode.workspace.isTrusted,
      notices: vscodeNotices(),
      log: this.log,
      restoreEditor: vscodeRestoreEditor({ workspaceRoot: workspace.uri, versions }),
      views,
      maxSteps: () => readSettings().budget.max_steps ?? 25,
      allowTool: (toolName) => mcp.allowTool(registry, toolName),
      allowDomains: allowDomainsAlways,
      by: localDecider(owner.hostname, 'window', vscode.env.sessionId),
      progress: async (title, task) =>
        await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title }, task),
    });
    this.register(actions.background);
    const model = this.register(new RunsTreeModel(store, actions.background));
    const runsView = this.register(new RunsView(model, mcp));
    if (combined) {
      runsView.showSharedStore(combined);
      // Connected (at startup, late, or back after an outage): its runs join the listing, and the
      // workers' runs are followed from its change feed.
      const connected = () => {
        const workers = combined.workers;
        if (workers) actions.background.connect(workers);
      };
      this.register(combined.onState((s) => void (s.kind === 'connected' && (connected(), model.reload()))));
      connected();
    } else void vscode.commands.executeCommand('setContext', ContextKeys.sharedStore, 'off');
    const panels: RunViewPanels = this.register(
      new RunViewPanels({
        extensionUri: context.extensionUri,
        store,
        runner,
        log: this.log,
        threadRuns: (threadId) => threadRuns(store, threadId),
        workspaceRoot: workspace.uri.fsPath,
        approvalMode: () => approval.line(),
        actions,
        workers: actions.background,
        editor: runViewEditor({
          store,
          proposed,
          workspaceRoot: workspace.uri,
          openRun: (runId) => panels.show(runId),
          exportRun: async (runId) => {
            const run = await store.getRun(runId);
            return run && exportRun(store, run);
          },
          revealInTree: (runId) => runsView.reveal(runId),
        }),
      }),
    );
    const sessions: RunSessions = this.register(
      new RunSessions(
        runner,
        panels,
        this.log,
        async (id) => (await store.getRun(id))?.title ?? id,
        (runId) => actions.resume.run(runId),
      ),
    );
    this.register(registerCheckpointDocuments(store));

    const commands: CommandContext = {
      store,
      runner,
      actions,
      model,
      sessions,
      panels,
      log: this.log,
      settings: readSettings,
      hasUsableKey: async () => (await keys.has()) || isLocalEndpoint(readSettings().baseUrl),
      models,
      memento: context.workspaceState,
    };
    this.register(registerRunCommands(commands));
    this.register(registerApprovalCommands(commands));
    this.register(registerCheckpointCommands(commands));
    this.register(registerTransferCommands(commands));
    this.register(registerRestoreCommands(commands));
    this.register(registerWorkerCommands(commands));
    this.register(registerMcpCommands(mcp, this.log));
    this.register(
      registerSharedStoreCommands({
        secrets: context.secrets,
        log: this.log,
        workspaceRoot: workspace.uri.fsPath,
        combined,
        model,
        owner,
      }),
    );

    this.register(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('agentWaypoints.retention.finishedRunDays')) {
          this.applyRetention(store).catch((err) => log.error(`retention: ${errorMessage(err)}`));
        }
      }),
    );
    // Another window on this workspace (code-server tabs, remote clients) shares the storage: catch up
    // with what it did when this window comes back into focus — no polling.
    this.register(
      vscode.window.onDidChangeWindowState((w) => {
        if (!w.focused) return;
        store
          .rescan()
          .then((changed) => (changed ? model.reload() : undefined))
          .catch((err) => log.warn(`re-reading the runs folder failed: ${errorMessage(err)}`));
      }),
    );
    this.register(vscode.workspace.onDidGrantWorkspaceTrust(() => this.setRestricted()));
    this.setRestricted();

    const ready = (async () => {
      await model.load();
      runsView.update();
      await restoreOnStartup({
        runner,
        model,
        panels,
        log,
        settings: readSettings,
        memento: context.workspaceState,
        resume: (runId) => actions.resume.run(runId),
      });
      await this.applyRetention(store);
    })().catch((err) => log.error(`startup: ${errorMessage(err)}`));
    this.api = {
      storageDir,
      pid: process.pid,
      store,
      runner,
      panels,
      tree: runsView.tree,
      files,
      scanIndex,
      ready,
      mcp,
      ...(testingApi
        ? {
            testing: {
              ...testingApi,
              restoreFiles: (target: { runId: string; seq: number }, o: { rewind: boolean; ticked: string[] }) =>
                actions.restore.run(target, { rewind: o.rewind, ticked: new Set(o.ticked) }),
            },
          }
        : {}),
    };
  }

  /** VS Code's own ripgrep (under appRoot) for list_files and search_text; the exclude settings are read at each call. */
  private fileFinder(): FileFinder {
    const ripgrepPath = findRipgrep(vscode.env.appRoot);
    this.log.info(
      ripgrepPath
        ? `search: ripgrep at ${ripgrepPath}`
        : `search: no ripgrep under ${vscode.env.appRoot}; using the built-in Node search`,
    );
    return createFileFinder({
      ripgrepPath,
      excludes: readExcludes,
      onFallback: (reason) => this.log.warn(`search: ${reason}; using the built-in Node search`),
    });
  }

  /** Deletes finished runs older than the retention setting (off by default): after startup and when the setting changes. */
  private async applyRetention(store: CheckpointStore): Promise<void> {
    const days = readSettings().finishedRunTtlDays;
    if (!(days > 0)) return;
    const deleted = await store.pruneFinished(days * 24 * 60 * 60 * 1000);
    if (deleted.length > 0)
      this.log.info(`retention: deleted ${deleted.length} finished run(s) older than ${days} days`);
  }

  private setRestricted(): void {
    void vscode.commands.executeCommand('setContext', ContextKeys.restricted, !vscode.workspace.isTrusted);
  }

  /** Without a folder there is no workspace storage: commands explain instead of failing. */
  private registerWithoutFolder(): void {
    const explain = () =>
      void vscode.window
        .showInformationMessage('Agent Waypoints stores runs per workspace: open a folder first.', 'Open Folder')
        .then((p) => {
          if (p) void vscode.commands.executeCommand('vscode.openFolder');
        });
    for (const id of Object.values(CommandIds)) {
      if (
        id === CommandIds.setApiKey ||
        id === CommandIds.clearApiKey ||
        id === CommandIds.showLog ||
        id === CommandIds.checkConnection ||
        id === CommandIds.checkSandbox ||
        id === CommandIds.chooseCommandApproval
      )
        continue;
      this.register(registerCommand(id, explain));
    }
  }

  /** Called from deactivate(): stop active runs as interrupted, flush the store (bounded), dispose. */
  async shutdown(): Promise<void> {
    try {
      await this.runner?.shutdown(FLUSH_TIMEOUT_MS);
      await this.mcp?.stop();
      await this.store?.close(FLUSH_TIMEOUT_MS);
    } catch (err) {
      this.log.error(`shutdown: ${errorMessage(err)}`);
    } finally {
      this.dispose();
    }
  }
}
