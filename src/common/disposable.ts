/** Anything with a dispose(); structurally compatible with vscode.Disposable. */
export interface Disposable {
  dispose(): unknown;
}

/**
 * Owns disposables and disposes them in reverse order of registration, so that
 * what was built last (and may depend on what came before) goes first.
 * Errors in one dispose never stop the others; they are collected and rethrown.
 */
export class DisposableStore implements Disposable {
  private readonly items: Disposable[] = [];
  private disposed = false;

  get isDisposed(): boolean {
    return this.disposed;
  }

  register<T extends Disposable>(item: T): T {
    if (this.disposed) {
      item.dispose();
      throw new Error('register() on a disposed DisposableStore');
    }
    this.items.push(item);
    return item;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    const errors: unknown[] = [];
    while (this.items.length > 0) {
      const item = this.items.pop()!;
      try {
        item.dispose();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, 'errors while disposing');
  }
}

export function toDisposable(fn: () => unknown): Disposable {
  return { dispose: fn };
}

/**
 * Base of every component that owns disposables (VS Code's `Disposable` with `_register`):
 * `this._register(x)` instead of a hand-rolled subscription list; `dispose()` disposes them in
 * reverse order. Subclasses that override dispose() call super.dispose().
 */
export abstract class DisposableBase implements Disposable {
  private readonly _store = new DisposableStore();

  protected get isDisposed(): boolean {
    return this._store.isDisposed;
  }

  protected _register<T extends Disposable>(item: T): T {
    return this._store.register(item);
  }

  dispose(): void {
    this._store.dispose();
  }
}
