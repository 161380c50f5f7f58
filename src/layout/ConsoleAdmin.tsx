// react-admin's <Admin>, composed from its parts with every page given: <Admin>
// names a default for each page it is not handed (its own layout, menu,
// sign-in form with react-hook-form, preferences inspector), and those
// defaults were a seventh of what the login page downloaded.
import { CssBaseline } from '@mui/material';
import type { ComponentType, ReactNode } from 'react';
import {
  AccessDenied,
  AuthenticationError,
  CoreAdminContext,
  CoreAdminUI,
  Error as ErrorPage,
  localStorageStore,
  ThemeProvider,
  ThemesContext,
  type CoreAdminContextProps,
  type CoreAdminUIProps,
  type RaThemeOptions,
} from 'react-admin';

const store = localStorageStore();

export interface ConsoleAdminProps extends Omit<CoreAdminContextProps, 'store' | 'children' | 'dashboard'> {
  children: ReactNode;
  layout: NonNullable<CoreAdminUIProps['layout']>;
  dashboard: NonNullable<CoreAdminUIProps['dashboard']>;
  catchAll: NonNullable<CoreAdminUIProps['catchAll']>;
  loading: NonNullable<CoreAdminUIProps['loading']>;
  notification: ComponentType;
  lightTheme: RaThemeOptions;
  darkTheme: RaThemeOptions;
}

export function ConsoleAdmin({
  children,
  layout,
  dashboard,
  catchAll,
  loading,
  notification: Notification,
  lightTheme,
  darkTheme,
  ...context
}: ConsoleAdminProps) {
  return (
    <CoreAdminContext {...context} store={store}>
      <ThemesContext.Provider value={{ lightTheme, darkTheme }}>
        <ThemeProvider>
          <CssBaseline enableColorScheme>
            <CoreAdminUI
              layout={layout}
              dashboard={dashboard}
              catchAll={catchAll}
              loading={loading}
              loginPage={false}
              error={ErrorPage}
              accessDenied={AccessDenied}
              authenticationError={AuthenticationError}
              disableTelemetry
            >
              {children}
            </CoreAdminUI>
            <Notification />
          </CssBaseline>
        </ThemeProvider>
      </ThemesContext.Provider>
    </CoreAdminContext>
  );
}
