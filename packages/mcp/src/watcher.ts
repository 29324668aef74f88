import { type ContributionService, listedPrompt, listedResource, listedTemplate } from './contributions.ts';
import type { EngineView } from './engine-view.ts';
import type { ExposurePolicy } from './exposure.ts';
import type { Log } from './log.ts';
import type { ContextInfo, ResourceService } from './resources.ts';
import type { SessionHub } from './sessions.ts';
import { exposedTools } from './tools.ts';

// spec: MCP server/tools §list-changed and server/resources §subscriptions. A refresh re-reads the
// exposed tool set and every subscribed eng:// resource and notifies only on a real change (the
// reference sent tools/list_changed on every engine event, mcp.md §10). Refreshes run on the
// engine's `engine::functions-available` / `engine::workers-available` events and on a slow poll,
// which catches what no event reports: trigger changes, and metadata changes on an iii engine
// (eng fires `functions-available` for those too).

const EMPTY_RESOURCES = JSON.stringify({ resources: [], templates: [] });

export class ChangeWatcher {
  private lastTools?: string;
  private lastResourceList?: string;
  private lastPromptList?: string;
  private readonly lastResources = new Map<string, string>();
  private running = false;
  private again = false;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly view: EngineView,
    private readonly policy: ExposurePolicy,
    private readonly hub: SessionHub,
    private readonly resources: ResourceService,
    private readonly context: () => ContextInfo,
    private readonly log: Log,
    private readonly contributions?: ContributionService,
  ) {}

  start(pollMs: number): void {
    this.schedule();
    this.timer = setInterval(() => {
      if (this.hub.size > 0) this.schedule();
    }, pollMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Coalesces: a refresh asked for while one runs runs once more afterwards. */
  schedule(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.refresh()
      .catch((err) => this.log.debug(`refresh failed: ${(err as Error).message}`))
      .finally(() => {
        this.running = false;
        if (this.again) {
          this.again = false;
          this.schedule();
        }
      });
  }

  /** A client was shown no function tools (engine unreachable): the next real listing is a change to announce. */
  degradedListServed(): void {
    this.lastTools ??= '[]';
  }

  /** The same for resources, templates and prompts contributed by functions. */
  degradedContributionsServed(): void {
    this.lastResourceList ??= EMPTY_RESOURCES;
    this.lastPromptList ??= '[]';
  }

  /** Record a subscription's current content, so the first change after subscribing is noticed. */
  async prime(uri: string): Promise<void> {
    if (!uri.startsWith('eng://') || this.lastResources.has(uri)) return;
    this.lastResources.set(uri, await this.snapshot(uri));
  }

  private async snapshot(uri: string): Promise<string> {
    try {
      return JSON.stringify(withoutLoad(uri, await this.resources.payload(uri, this.context)));
    } catch (err) {
      // a resource that does not exist (yet) is a state too; its appearance is a change
      if ((err as { code?: number }).code === -32002) return 'not-found';
      throw err;
    }
  }

  private async refresh(): Promise<void> {
    // disconnected, clients are shown no function tools (ToolService.list): that is the baseline,
    // unless we never had one (startup), when nobody has seen a list worth correcting yet
    if (!this.view.connected && this.lastTools === undefined) return;
    const rows = this.view.connected ? await this.view.listFunctions() : [];
    const tools = JSON.stringify(exposedTools(rows, this.policy));
    if (this.lastTools !== undefined && tools !== this.lastTools) {
      this.log.info('the set of exposed tools changed; notifying clients');
      this.hub.toolsChanged();
    }
    this.lastTools = tools;
    if (this.contributions) {
      const found = this.contributions.of(rows);
      const resources = JSON.stringify({ resources: found.resources.map(listedResource), templates: found.templates.map(listedTemplate) });
      const prompts = JSON.stringify(found.prompts.map(listedPrompt));
      if (this.lastResourceList !== undefined && resources !== this.lastResourceList) {
        this.log.info('the resources contributed by functions changed; notifying clients');
        this.hub.resourcesListChanged();
      }
      if (this.lastPromptList !== undefined && prompts !== this.lastPromptList) {
        this.log.info('the prompts contributed by functions changed; notifying clients');
        this.hub.promptsListChanged();
      }
      this.lastResourceList = resources;
      this.lastPromptList = prompts;
    }

    if (!this.view.connected) return;
    const subscribed = this.hub.subscribedUris();
    for (const uri of this.lastResources.keys()) if (!subscribed.has(uri)) this.lastResources.delete(uri);
    for (const uri of subscribed) {
      if (!uri.startsWith('eng://')) continue;
      const text = await this.snapshot(uri);
      const previous = this.lastResources.get(uri);
      this.lastResources.set(uri, text);
      if (previous !== undefined && previous !== text) this.hub.resourceUpdated(uri);
    }
  }
}

/**
 * A worker's load is not a change worth a `resources/updated`: `active_invocations`, the `busy`
 * status it implies and `latest_metrics` move with every call in flight, including eng-mcp's own
 * (over HTTP each request, and each open GET stream, is an invocation of eng-mcp's `/mcp`
 * function), so a subscriber of eng://workers would be told of changes it caused by asking.
 * Compared without them; what a read returns is unchanged.
 */
function withoutLoad(uri: string, payload: unknown): unknown {
  if (uri !== 'eng://workers' && !uri.startsWith('eng://worker/')) return payload;
  const strip = (row: unknown): unknown => {
    if (row === null || typeof row !== 'object' || Array.isArray(row)) return row;
    const { active_invocations: _active, latest_metrics: _metrics, ...rest } = row as Record<string, unknown>;
    if (rest.status === 'busy') rest.status = 'connected';
    return rest;
  };
  return Array.isArray(payload) ? payload.map(strip) : strip(payload);
}
