// The console: react-admin with real browser paths, our top-menu layout, the
// resources of the registry and the console's own pages.
import { QueryClient } from '@tanstack/react-query';
import { createElement, lazy, type ReactNode } from 'react';
import { Authenticated, CustomRoutes, Resource } from 'react-admin';
import { createBrowserRouter, Route, RouterProvider } from 'react-router-dom';
import { authProvider } from './authProvider';
import { consoleDataProvider } from './consoleDataProvider';
import { setUnauthorizedHandler } from './dataProvider/httpClient';
import { clearStoredUser, readStoredUser } from './dataProvider/storage';
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
import { lazyNamed } from './lazyNamed';
import { MENU_ITEMS } from './menu';
import { RESOURCES, type ResourceDefinition } from './resources';
import { darkTheme, lightTheme } from './theme';

// Pages that are not on the first screen load on demand behind 'loading {page}...'.
const AboutPage = lazy(() => import('./pages/AboutPage'));
const ChatPage = lazy(() => import('./pages/ChatPage'));
const SettingPage = lazy(() => import('./settings/SettingPage'));
const TopUpPage = lazy(() => import('./pages/TopUpPage'));
const PricingPage = lazy(() => import('./pages/PricingPage'));
const PlaygroundPage = lazy(() => import('./pages/PlaygroundPage'));
const UserSelfEditPage = lazy(() => import('./pages/UserSelfEditPage'));
const OrganizationsPage = lazy(() => import('./pages/organizations/OrganizationsPage'));
const OrganizationPage = lazy(() => import('./pages/organizations/OrganizationPage'));
// an admin who must enrol in two-factor sign-in sees it once; nobody else ever loads it
const TwoFactorSetupPage = lazyNamed(() => import('./pages/TwoFactorSetupPage'), 'TwoFactorSetupPage');
// single sign-on's return page, loaded only on the way back from the provider
const OidcCallbackPage = lazyNamed(() => import('./pages/OidcCallbackPage'), 'OidcCallbackPage');

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

/** The page frame with the registry's menu (the layout imports no resource module). */
const ConsoleLayout = ({ children }: { children?: ReactNode }) => <AppLayout menu={MENU_ITEMS}>{children}</AppLayout>;

/** While react-admin checks the session before a page that needs one. */
const CheckingSession = () => <LoadingPage />;

/** A record's add and edit pages: a signed-out visitor is asked to sign in (they opened, and failed on submit). */
const signedIn = (page: ReactNode) => <Authenticated>{page}</Authenticated>;

/** A registry entry as react-admin's resource; forms with paths of their own are routed by formsAtOwnPaths. */
function resource({ name, list, create, edit, show, icon, recordRepresentation, paths }: ResourceDefinition) {
  return (
    <Resource
      key={name}
      name={name}
      list={list}
      create={paths?.create ? undefined : create}
      edit={paths?.edit ? undefined : edit}
      show={show}
      icon={icon}
      recordRepresentation={recordRepresentation}
    />
  );
}

/** The forms a resource keeps at one-api's paths rather than react-admin's. */
function formsAtOwnPaths({ name, create, edit, paths }: ResourceDefinition) {
  const forms = [
    [paths?.create, create],
    [paths?.edit, edit],
  ] as const;
  return forms.flatMap(([path, page]) =>
    path && page ? [<Route key={`${name}:${path}`} path={path} element={signedIn(createElement(page))} />] : [],
  );
}

function Console() {
  return (
    <StatusProvider>
      <ConsoleAdmin
        dataProvider={consoleDataProvider}
        queryClient={queryClient}
        authProvider={authProvider}
        i18nProvider={i18nProvider}
        layout={ConsoleLayout}
        dashboard={HomePage}
        catchAll={NotFoundPage}
        loading={CheckingSession}
        notification={AppNotification}
        lightTheme={lightTheme}
        darkTheme={darkTheme}
      >
        {RESOURCES.map(resource)}
        <CustomRoutes>
          {RESOURCES.flatMap(formsAtOwnPaths)}
          <Route path="/login" element={<LoginPage />} />
          <Route path="/two-factor" element={<TwoFactorSetupPage />} />
          <Route path="/register" element={<RegisterPage />} />
          <Route path="/reset" element={<ResetRequestPage />} />
          <Route path="/user/reset" element={<ResetConfirmPage />} />
          <Route path="/user/edit" element={<UserSelfEditPage />} />
          <Route path="/oauth/github" element={<GitHubCallbackPage />} />
          <Route path="/oauth/oidc" element={<OidcCallbackPage />} />
          <Route path="/setting" element={<SettingPage />} />
          <Route path="/topup" element={<TopUpPage />} />
          <Route path="/pricing" element={<PricingPage />} />
          <Route path="/playground" element={<PlaygroundPage />} />
          <Route path="/organization" element={<OrganizationsPage />} />
          <Route path="/organization/:id" element={<OrganizationPage />} />
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
