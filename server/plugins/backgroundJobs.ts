// The node's background work, started once the routes are in place: webhook
// delivery (decorated as `webhookDelivery`, stopped before close), the
// channels' periodic health checks and the log retention. Each periodic job
// runs on one worker of one node at a time (services/jobRunner.ts).
import fp from 'fastify-plugin';
import { DEFAULT_WEBHOOK_SETTINGS } from '../config';
import { scheduleLogRetention } from '../billing/logRetention';
import { scheduleChannelHealthChecks } from '../channels/channelHealth';
import { startDeliveryLoop } from '../webhooks/delivery';

export const backgroundJobsPlugin = fp(
  (app) => {
    const { config } = app.ctx;
    const webhookDelivery = startDeliveryLoop(app, { ...DEFAULT_WEBHOOK_SETTINGS, ...config.webhooks });
    app.decorate('webhookDelivery', webhookDelivery);
    app.addHook('preClose', () => webhookDelivery.stop());
    scheduleChannelHealthChecks(app, config.channelRetestIntervalSeconds);
    scheduleLogRetention(app);
    return Promise.resolve();
  },
  { name: 'switchboard-background-jobs', dependencies: ['switchboard-services'] },
);
