import { hostname } from 'node:os';
import type { ChannelManager } from '../../bus/channels.ts';
import { type BusAddress, BusService } from '../../bus/server.ts';
import type { EngineModule } from '../../core/module.ts';
import { Cluster } from './cluster.ts';
import { ClusterConfig } from './config.ts';

// issue 27 item 3: several engines on one Redis act as one. See cluster.ts and the README's
// "Running several engines".

export const ClusterFunction = {
  Members: 'eng::cluster::members',
} as const;

/** `eng-cluster`: this engine routes calls to, and serves calls from, the other engines on its Redis. */
export function clusterModule(): EngineModule<ClusterConfig> {
  let cluster: Cluster | undefined;
  return {
    name: 'eng-cluster',
    description: 'several engines on one Redis act as one: calls routed between engines, HTTP routes on every engine',
    configSchema: ClusterConfig,
    async start(ctx) {
      const addresses = () => {
        const bus = ctx.services.get<BusAddress>(BusService.Address)?.url ?? null;
        return {
          http: ctx.services.get<{ url?: string }>('address.http')?.url ?? null,
          bus: ctx.config.bus_url ?? bus?.replace('//0.0.0.0:', `//${hostname()}:`) ?? null,
        };
      };
      const channels = () => ctx.services.get<ChannelManager>(BusService.Channels);
      cluster = new Cluster(ctx.core, ctx.config, ctx.log, addresses, channels);
      await cluster.start();
      const joined = cluster;
      ctx.registerFunction(
        {
          id: ClusterFunction.Members,
          description: 'The engines of this cluster: ids, addresses and how many functions and HTTP routes each serves',
          metadata: { internal: true },
        },
        () => joined.describe(),
      );
    },
    async stop() {
      await cluster?.stop();
    },
  };
}
