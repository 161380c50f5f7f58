// The console: react-admin with real browser paths, our top-menu layout, the
// five resources and the custom pages of the top menu.
import { QueryClient } from '@tanstack/react-query';
import { lazy, type ComponentType, type ReactNode } from 'react';
import { Authenticated, CustomRoutes, Resource } from 'react-admin';
import { createBrowserRouter, Route, RouterProvider } from 'react-router-dom';
import { authProvider } from './authProvider';
import { dataProvider } from './dataProvider';
import { setUnauthorizedHandler } from './dataProvider/httpClient';
import { clearStoredUser, readStoredUser } from './authProvider/storage';
import { i18nProvider } from './i18n';
import { AppLayout } from './layout/AppLayout';
import { ConsoleAdmin } from './layout/ConsoleAdmin';
import { LoadingPage } from './layout/LoadingPage';
import { AppNotification } from './layout/notice';
import { StatusProvider } from './layout/status';
import { HomePage } from './pages/HomePage';
import { LoginPage } from './pages/LoginPage';
import { GitHubCallbackPage } from './pages/GitHubCallbackPage';
import { NotFoundPage } from './pages/NotFoundPage';
import { RegisterPage } from './pages/RegisterPage';
import { ResetConfirmPage } from './pages/ResetConfirmPage';
import { ResetRequestPage } from './pages/ResetRequestPage';
import channel from './resources/channel';
import log from './resources/log';
import redemption from './resources/redemption';
import token from './resources/token';
import user from './resources/user';
import webhook from './resources/webhook';
import webhookDelivery from './resources/webhook_delivery';
import { darkTheme, lightTheme } from './theme';

// Pages that are not on the first screen load on demand behind 'loading {page}...'.
/** A named export of a module loaded on demand. */
const lazyNamed = <Module,>(load: () => Promise<Module>, name: keyof Module) =>
  lazy(() => load().then((module) => ({ default: module[name] as ComponentType })));
// the record forms: the login page and a user's first screen never need them (admin-only ones least of all)
const ChannelCreate = lazyNamed(() => import('./resources/channel/ChannelCreate'), 'ChannelCreate');
const ChannelEdit = lazyNamed(() => import('./resources/channel/ChannelEdit'), 'ChannelEdit');
const RedemptionCreate = lazyNamed(() => import('./resources/redemption/RedemptionForms'), 'RedemptionCreate');
const RedemptionEdit = lazyNamed(() => import('./resources/redemption/RedemptionForms'), 'RedemptionEdit');
const TokenCreate = lazyNamed(() => import('./resources/token/TokenCreate'), 'TokenCreate');
const TokenEdit = lazyNamed(() => import('./resources/token/TokenEdit'), 'TokenEdit');
const UserCreate = lazyNamed(() => import('./resources/user/UserForms'), 'UserCreate');
const UserEdit = lazyNamed(() => import('./resources/user/UserForms'), 'UserEdit');
const AboutPage = lazy(() => import('./pages/AboutPage'));
const ChatPage = lazy(() => import('./pages/ChatPage'));
const SettingPage = lazy(() => import('./settings/SettingPage'));
const TopUpPage = lazy(() => import('./pages/TopUpPage'));
const UserSelfEditPage = lazy(() => import('./pages/UserSelfEditPage'));
// an admin who must enrol in two-factor sign-in sees it once; nobody else ever loads it
const TwoFactorSetupPage = lazyNamed(() => import('./pages/TwoFactorSetupPage'), 'TwoFactorSetupPage');

setUnauthorizedHandler(() => {
  // a signed-in browser whose session ended: forget the user and ask for a new login
  if (readStoredUser() === null || window.location.pathname === '/login') return;
  clearStoredUser();
  window.location.assign('/login?expired=true');
});

// A call the server refused (4xx) is not retried; an unreachable server is
// retried once, so lists and forms reach their error state (with Retry) in
// about a second instead of react-query's default three retries over 7 s.
const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      retry: (failures, error) => {
        const status = (error as { status?: number })?.status ?? 0;
        return status >= 400 && status < 500 ? false : failures < 1;
      },
    },
  },
});

/** While react-admin checks the session before a page that needs one. */
const CheckingSession = () => <LoadingPage />;

/** A record's add and edit pages: a signed-out visitor is asked to sign in (they opened, and failed on submit). */
const signedIn = (page: ReactNode) => <Authenticated>{page}</Authenticated>;

function Console() {
  return (
    <StatusProvider>
      <ConsoleAdmin
        dataProvider={dataProvider}
        queryClient={queryClient}
        authProvider={authProvider}
        i18nProvider={i18nProvider}
        layout={AppLayout}
        dashboard={HomePage}
        catchAll={NotFoundPage}
        loading={CheckingSession}
        notification={AppNotification}
        lightTheme={lightTheme}
        darkTheme={darkTheme}
      >
        <Resource name="channel" {...channel} />
        <Resource name="token" {...token} />
        <Resource name="redemption" {...redemption} />
        <Resource name="user" {...user} />
        <Resource name="log" {...log} />
        <Resource name="webhook" {...webhook} />
        <Resource name="webhook_delivery" {...webhookDelivery} />
        <CustomRoutes>
          <Route path="/channel/add" element={signedIn(<ChannelCreate />)} />
          <Route path="/channel/edit/:id" element={signedIn(<ChannelEdit />)} />
          <Route path="/token/add" element={signedIn(<TokenCreate />)} />
          <Route path="/token/edit/:id" element={signedIn(<TokenEdit />)} />
          <Route path="/redemption/add" element={signedIn(<RedemptionCreate />)} />
          <Route path="/redemption/edit/:id" element={signedIn(<RedemptionEdit />)} />
          <Route path="/user/add" element={signedIn(<UserCreate />)} />
          <Route path="/user/edit/:id" element={signedIn(<UserEdit />)} />
          <Route path="/login" element={<LoginPage />} />
          <Route path="/two-factor" element={<TwoFactorSetupPage />} />
          <Route path="/register" element={<RegisterPage />} />
          <Route path="/reset" element={<ResetRequestPage />} />
          <Route path="/user/reset" element={<ResetConfirmPage />} />
          <Route path="/user/edit" element={<UserSelfEditPage />} />
          <Route path="/oauth/github" element={<GitHubCallbackPage />} />
          <Route path="/setting" element={<SettingPage />} />
          <Route path="/topup" element={<TopUpPage />} />
          <Route path="/about" element={<AboutPage />} />
          <Route path="/chat" element={<ChatPage />} />
        </CustomRoutes>
      </ConsoleAdmin>
    </StatusProvider>
  );
}

// A data router (not <BrowserRouter>): forms can then block a navigation that
// would lose unsaved edits (react-admin's warnWhenUnsavedChanges, the settings page).
const router = createBrowserRouter([{ path: '*', element: <Console /> }]);

export function App() {
  return <RouterProvider router={router} />;
}
