import type { ClientStatus } from '../../common/options';
import { dataProvider } from '../dataProvider';

/** Sends the browser to GitHub's authorize page with a fresh one-time state. */
export async function startGitHubSignIn(status: ClientStatus | null): Promise<void> {
  const state = await dataProvider.getOAuthState();
  const clientId = encodeURIComponent(status?.github_client_id ?? '');
  window.location.assign(
    `https://github.com/login/oauth/authorize?client_id=${clientId}&scope=user:email&state=${encodeURIComponent(state)}`,
  );
}
