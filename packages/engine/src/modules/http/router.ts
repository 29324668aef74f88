// spec: engine-protocol §5.2 — routes keyed by `METHOD:path-without-leading-slash`, `:name`
// segments are parameters. A segment trie per method keeps lookups O(segments) however many
// routes are registered (iii's axum router has the same property).

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export interface Route<T> {
  method: HttpMethod;
  /** Parameter names in path order (matched values come back in the same order). */
  paramNames: string[];
  /** The pattern as registered (leading slash kept as the user wrote it). */
  pattern: string;
  /** `METHOD:path-without-leading-slash`, the identity of a route. */
  key: string;
  value: T;
}

export interface RouteMatch<T> {
  route: Route<T>;
  params: Record<string, string>;
}

interface Node<T> {
  statics: Map<string, Node<T>>;
  /** Parameter children by name; several names may coexist when the shapes differ further down. */
  params: Array<{ name: string; node: Node<T> }>;
  route?: Route<T>;
}

const newNode = <T>(): Node<T> => ({ statics: new Map(), params: [] });

/** Path segments without empty ones, so `/a/b/`, `a//b` and `a/b` are the same path. */
export function splitPath(path: string): string[] {
  const segments: string[] = [];
  for (const segment of path.split('/')) if (segment !== '') segments.push(segment);
  return segments;
}

/** The route key iii uses: `GET:users/:id` (root stays `/`). */
export function routeKey(method: string, pattern: string): string {
  return `${method.toUpperCase()}:${splitPath(pattern).join('/') || '/'}`;
}

/** Shape with parameter names collapsed: two routes with one shape would be ambiguous. */
function signature(method: string, segments: string[]): string {
  return `${method}:${segments.map((s) => (s.startsWith(':') ? ':' : s)).join('/')}`;
}

export class RouteConflictError extends Error {}

export class Router<T> {
  private readonly roots = new Map<HttpMethod, Node<T>>();
  private readonly bySignature = new Map<string, Route<T>>();

  get size(): number {
    return this.bySignature.size;
  }

  routes(): IterableIterator<Route<T>> {
    return this.bySignature.values();
  }

  /**
   * Add (or replace: same method and path, last wins) a route. Throws RouteConflictError when a
   * route of the same shape but other parameter names exists (0.22.1 behaviour).
   */
  add(method: HttpMethod, pattern: string, value: T): Route<T> {
    const segments = splitPath(pattern);
    for (const segment of segments) {
      if (segment === ':') throw new RouteConflictError(`Route '${method} ${pattern}' has a parameter without a name`);
    }
    const key = routeKey(method, pattern);
    const sig = signature(method, segments);
    const existing = this.bySignature.get(sig);
    if (existing && existing.key !== key) {
      throw new RouteConflictError(
        `Route '${method} ${pattern}' conflicts with already-registered route '${method} ${existing.pattern}': routes with identical structure but different path-parameter names are not supported`,
      );
    }
    let node: Node<T> = this.roots.get(method) ?? newNode<T>();
    this.roots.set(method, node);
    for (const segment of segments) {
      const parent: Node<T> = node;
      if (segment.startsWith(':')) {
        const name = segment.slice(1);
        let param = parent.params.find((p) => p.name === name);
        if (!param) {
          param = { name, node: newNode<T>() };
          parent.params.push(param);
        }
        node = param.node;
      } else {
        let child = parent.statics.get(segment);
        if (!child) {
          child = newNode<T>();
          parent.statics.set(segment, child);
        }
        node = child;
      }
    }
    const paramNames = segments.filter((s) => s.startsWith(':')).map((s) => s.slice(1));
    const route: Route<T> = { method, paramNames, pattern, key, value };
    node.route = route;
    this.bySignature.set(sig, route);
    return route;
  }

  /** Remove the route at method+pattern when `owns` (if given) accepts the current one. */
  remove(method: HttpMethod, pattern: string, owns?: (value: T) => boolean): boolean {
    const segments = splitPath(pattern);
    const root = this.roots.get(method);
    if (!root) return false;
    const path: Array<{ parent: Node<T>; segment: string; node: Node<T> }> = [];
    let node: Node<T> | undefined = root;
    for (const segment of segments) {
      const parent: Node<T> = node;
      node = segment.startsWith(':') ? parent.params.find((p) => p.name === segment.slice(1))?.node : parent.statics.get(segment);
      if (!node) return false;
      path.push({ parent, segment, node });
    }
    if (!node.route || (owns && !owns(node.route.value))) return false;
    node.route = undefined;
    this.bySignature.delete(signature(method, segments));
    // prune branches left without routes so lookups never walk dead ends
    for (let i = path.length - 1; i >= 0; i--) {
      const step = path[i] as { parent: Node<T>; segment: string; node: Node<T> };
      if (step.node.route || step.node.statics.size > 0 || step.node.params.length > 0) break;
      if (step.segment.startsWith(':')) step.parent.params = step.parent.params.filter((p) => p.node !== step.node);
      else step.parent.statics.delete(step.segment);
    }
    return true;
  }

  /** Find the route for a concrete path. Static segments win over parameters. */
  match(method: string, pathname: string): RouteMatch<T> | null {
    const root = this.roots.get(method as HttpMethod);
    if (!root) return null;
    const segments = splitPath(pathname);
    const values: string[] = [];
    const route = find(root, segments, 0, values);
    if (!route) return null;
    const params: Record<string, string> = {};
    for (let i = 0; i < values.length; i++) params[route.paramNames[i] as string] = decodeSegment(values[i] as string);
    return { route, params };
  }

  /** Methods that have a route for this path (for 405 answers). */
  methodsFor(pathname: string): HttpMethod[] {
    const methods: HttpMethod[] = [];
    const segments = splitPath(pathname);
    for (const [method, root] of this.roots) if (find(root, segments, 0, [])) methods.push(method);
    return methods;
  }
}

function find<T>(node: Node<T>, segments: string[], index: number, values: string[]): Route<T> | undefined {
  if (index === segments.length) return node.route;
  const segment = segments[index] as string;
  const child = node.statics.get(segment);
  if (child) {
    const found = find(child, segments, index + 1, values);
    if (found) return found;
  }
  for (const param of node.params) {
    values.push(segment);
    const found = find(param.node, segments, index + 1, values);
    if (found) return found;
    values.pop();
  }
  return undefined;
}

function decodeSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
