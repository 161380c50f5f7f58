// The node's background work, started once the routes are in place: webhook
// delivery (decorated as `webhookDelivery`, stopped before close), the
// channels' periodic health checks and the log retention. Each periodic job
// runs on one worker of one node at a time (services/jobRunner.ts).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { DEFAULT_WEBHOOK_SETTINGS } from '../config';
import { retentionSchedule } from '../billing/retentionJob';
import { channelHealthChecks, type ChannelJobDeps } from '../channels/channelHealth';
import { channelKeyUsageOf } from '../channels/keyUsage';
import { startDeliveryLoop } from '../webhooks/delivery';
import { retentionDepsOf } from './retention';
import { TaskPoller } from '../relay/tasks/poller';
import { videoTaskKind } from '../relay/tasks/videoVendors';
import { appFileStore } from '../services/s3FileStore';

/** What the channels' checks and jobs (channels/channelHealth.ts) are handed: the app's services and its log. */
export function channelJobDepsOf(app: FastifyInstance): ChannelJobDeps {
  const { db, options, jobs, sendMail } = app.ctx;
  return { db, options, jobs, sendMail, log: app.log };
}

export const backgroundJobsPlugin = fp(
  (app) => {
    const { config, db, nodeId } = app.ctx;
    const webhookDelivery = startDeliveryLoop({ db, nodeId, log: app.log }, { ...DEFAULT_WEBHOOK_SETTINGS, ...config.webhooks });
    app.decorate('webhookDelivery', webhookDelivery);
    app.addHook('preClose', () => webhookDelivery.stop());
    const healthChecks = channelHealthChecks(channelJobDepsOf(app), config.channelRetestIntervalSeconds);
    app.addHook('onReady', () => {
      healthChecks.start();
      return Promise.resolve();
    });
    // every channel job stopped, then the relay's last key tallies written, while the database is still open
    app.addHook('preClose', async () => {
      await healthChecks.stop();
      await channelKeyUsageOf({ db, log: app.log }).flush();
    });
    // the hourly prune of logs, error logs and the other kinds past their retention (billing/retentionKinds.ts)
    const retention = retentionSchedule(retentionDepsOf(app));
    app.addHook('onReady', () => {
      retention.start();
      return Promise.resolve();
    });
    app.addHook('preClose', () => retention.stop());
    // asynchronous tasks (videos): every node polls the due ones, each under a lease of its own (relay/tasks/poller.ts)
    const taskPoller = new TaskPoller({
      db,
      options: app.ctx.options,
      nodeId,
      log: app.log,
      kinds: [videoTaskKind(db, appFileStore(config, db, app.log))],
      settings: config.tasks,
    });
    app.decorate('taskPoller', taskPoller);
    app.addHook('onReady', () => {
      taskPoller.start();
      return Promise.resolve();
    });
    app.addHook('preClose', () => taskPoller.stop());
    return Promise.resolve();
  },
  { name: 'switchboard-background-jobs', dependencies: ['switchboard-services'] },
);
