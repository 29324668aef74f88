import type { TriggerBinding } from '../../core/triggers.ts';
import type { TriggerRoute } from './pipeline.ts';
import type { HttpMethod } from './router.ts';

export interface RouteHolder {
  binding: TriggerBinding;
  route: TriggerRoute;
  method: HttpMethod;
  path: string;
}

/**
 * Every binding of one method+path, oldest first: the newest serves the route (last wins, as in
 * iii) and the ones below it are shadowed. When the serving binding leaves, the one below takes the
 * route back, so a worker that bound a route and then left never takes another worker's route with
 * it. A shadowed binding lists as inactive and says which binding serves its route.
 */
export class RouteShadows {
  private readonly stacks = new Map<string, RouteHolder[]>();

  push(key: string, holder: RouteHolder): void {
    const stack = (this.stacks.get(key) ?? []).filter((h) => h.binding.id !== holder.binding.id);
    const serving = stack.at(-1);
    if (serving) shadow(serving, holder);
    stack.push(holder);
    this.stacks.set(key, stack);
  }

  /** Forget a binding; answers the holder that serves the route now, if the leaving one served it. */
  remove(key: string, bindingId: string): RouteHolder | undefined {
    const stack = this.stacks.get(key);
    if (!stack) return undefined;
    const index = stack.findIndex((h) => h.binding.id === bindingId);
    if (index < 0) return undefined;
    const wasServing = index === stack.length - 1;
    stack.splice(index, 1);
    if (stack.length === 0) {
      this.stacks.delete(key);
      return undefined;
    }
    if (!wasServing) return undefined;
    const next = stack.at(-1) as RouteHolder;
    next.binding.status = 'active';
    next.binding.error = undefined;
    return next;
  }
}

function shadow(holder: RouteHolder, by: RouteHolder): void {
  holder.binding.status = 'inactive';
  holder.binding.error = `shadowed: ${by.method} ${by.path} is served by trigger ${by.binding.id} (${by.binding.functionId}); this one takes the route back when that one is removed`;
}
