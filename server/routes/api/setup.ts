// The first-run checklist on root's dashboard (common/setupChecklist.ts): the
// steps' state read from the database, and the card's dismissal, kept in the
// SetupChecklistDismissed option so every node sees it.
import type { FastifyInstance } from 'fastify';
import { fail, ok } from '../../../common/envelope';
import { Role } from '../../../common/roles';
import type { SetupChecklist } from '../../../common/setupChecklist';
import { callerOf, requireRole } from '../../plugins/auth';
import { splitList } from '../../repositories/channels';
import { anyChannel, sampleChannelModels, setupStepStates } from '../../repositories/setupChecklist';

/** GET /api/setup/checklist and POST /api/setup/checklist/dismiss, both for root alone. */
export function setupRoutes(app: FastifyInstance): Promise<void> {
  const { db, options } = app.ctx;
  const rootOnly = requireRole(Role.root);

  app.get('/api/setup/checklist', { preHandler: rootOnly }, async (request) => {
    const [steps, models] = await Promise.all([setupStepStates(db, Number(callerOf(request).id)), sampleChannelModels(db)]);
    // with every channel deleted the install is back at its start: the dismissal lapses and the card returns
    if (!steps.channel_added && options.bool('SetupChecklistDismissed')) await options.set('SetupChecklistDismissed', 'false');
    const checklist: SetupChecklist = {
      ...steps,
      dismissed: steps.channel_added && options.bool('SetupChecklistDismissed'),
      model: splitList(models)[0] ?? '',
    };
    return ok(checklist);
  });

  // a dismissal lasts while a channel exists, so there must be one to dismiss the card
  app.post('/api/setup/checklist/dismiss', { preHandler: rootOnly }, async () => {
    if (!(await anyChannel(db))) return fail('add a channel first: the checklist can be hidden once one exists');
    await options.set('SetupChecklistDismissed', 'true');
    return ok();
  });
  return Promise.resolve();
}
