// /oauth/oidc?code=&state=&iss=: the provider's answer to a single sign-on,
// passed to the server once (the code and the pending sign-in are single-use,
// so a failure sends the person back to /login to start again). An account
// with two-factor sign-in goes on to the code step of /login.
import { useEffect, useRef } from 'react';
import { useTranslate } from 'react-admin';
import { useNavigate, useSearchParams } from 'react-router-dom';
import { storeUser } from '../dataProvider/storage';
import { dataProvider } from '../dataProvider';
import { useNotice } from '../layout/notice';
import { errorMessage } from '../dataProvider/errorMessage';
import { CallbackWaiting, goToSecondFactor } from './SignInCallback';

const ANSWER_FIELDS = ['code', 'state', 'iss', 'error', 'error_description'] as const;

export function OidcCallbackPage() {
  const translate = useTranslate();
  const notice = useNotice();
  const navigate = useNavigate();
  const [searchParams] = useSearchParams();
  const started = useRef(false);

  useEffect(() => {
    if (started.current) return;
    started.current = true;
    const answer = Object.fromEntries(ANSWER_FIELDS.map((field) => [field, searchParams.get(field) ?? undefined]));
    const finish = async () => {
      try {
        storeUser(await dataProvider.oidcOAuth(answer));
        notice('app.auth.login_success', 'success');
        void navigate('/');
      } catch (error) {
        if (goToSecondFactor(error, navigate)) return;
        notice(errorMessage(error), 'error');
        void navigate('/login');
      }
    };
    void finish();
  }, [navigate, notice, searchParams]);

  return <CallbackWaiting text={translate('app.auth.sso_working')} label={translate('app.auth.sso_working')} />;
}
