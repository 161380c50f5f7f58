// The first-run checklist on root's dashboard: five steps from a fresh install
// to a first relayed request, each ticked from what the database holds.
//
//   GET  /api/setup/checklist          root only: SetupChecklist in the usual envelope
//   POST /api/setup/checklist/dismiss  root only: hides the card (the SetupChecklistDismissed option)
//
// A dismissal holds only while at least one channel exists: delete every
// channel and the card comes back.

/** The steps, in the order the card lists them. */
export const SETUP_STEPS = ['password_changed', 'channel_added', 'channel_tested', 'token_created', 'request_sent'] as const;

export type SetupStep = (typeof SETUP_STEPS)[number];

/** Each step's state, whether the card is dismissed, and a model to put in the sample request. */
export type SetupChecklist = Record<SetupStep, boolean> & {
  /** Root dismissed the card and a channel still exists. */
  dismissed: boolean;
  /** A model of a channel (a tested one first), for the sample curl; '' while no channel lists one. */
  model: string;
};

/** Every step is done: the card has nothing left to say. */
export function setupComplete(checklist: SetupChecklist): boolean {
  return SETUP_STEPS.every((step) => checklist[step]);
}
