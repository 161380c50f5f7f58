// /oauth/github?code=: finish a GitHub login or bind. On failure it shows the
// message, goes to /setting, and retries with growing delays (2 s x attempt).
// An account with two-factor sign-in goes on to the code step of /login.
import { useEffect, useRef, useState } from 'react';
import { useTranslate } from 'react-admin';
import { useNavigate, useSearchParams } from 'react-router-dom';
import { storeUser } from '../dataProvider/storage';
import { dataProvider } from '../dataProvider';
import { useNotice } from '../layout/notice';
import { errorMessage } from '../dataProvider/errorMessage';
import { CallbackWaiting, goToSecondFactor } from './SignInCallback';

const MAX_ATTEMPTS = 5;

export function GitHubCallbackPage() {
  const translate = useTranslate();
  const notice = useNotice();
  const navigate = useNavigate();
  const [searchParams] = useSearchParams();
  const [attempt, setAttempt] = useState(0);
  const started = useRef(false);

  useEffect(() => {
    if (started.current) return;
    started.current = true;
    const code = searchParams.get('code') ?? '';
    const state = searchParams.get('state') ?? '';
    const run = async (count: number): Promise<void> => {
      try {
        const { message, user } = await dataProvider.githubOAuth(code, state);
        if (message === 'bind') {
          notice('app.auth.bind_success', 'success');
          void navigate('/setting');
        } else if (user) {
          storeUser(user);
          notice('app.auth.login_success', 'success');
          void navigate('/');
        }
      } catch (error) {
        if (goToSecondFactor(error, navigate)) return;
        notice(errorMessage(error), 'error');
        if (count === 0) void navigate('/setting');
        if (count + 1 >= MAX_ATTEMPTS) return;
        setAttempt(count + 1);
        await new Promise((wake) => setTimeout(wake, 2000 * (count + 1)));
        return run(count + 1);
      }
    };
    void run(0);
  }, [navigate, notice, searchParams]);

  return (
    <CallbackWaiting text={attempt > 0 ? translate('app.auth.oauth_retry', { count: attempt }) : translate('app.auth.oauth_working')} />
  );
}
