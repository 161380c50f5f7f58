// Screens load on demand: the login page and a user's first screen never download
// the lists and forms, admin-only ones least of all.
import { lazy, type ComponentType } from 'react';

/** A named export of a module loaded on demand. */
export const lazyNamed = <Module>(load: () => Promise<Module>, name: keyof Module) =>
  lazy(() => load().then((module) => ({ default: module[name] as ComponentType })));
