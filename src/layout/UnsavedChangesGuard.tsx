// The settings page keeps its drafts outside react-hook-form, so it cannot
// use `warnWhenUnsavedChanges`; this is the same behaviour for it: leaving
// with unsaved drafts asks first, in the app and when closing the tab.
import { useEffect } from 'react';
import { useCanBlock, useTranslate } from 'react-admin';
import { useBlocker } from 'react-router-dom';

function Guard({ dirty }: { dirty: boolean }) {
  const translate = useTranslate();
  const blocker = useBlocker(({ currentLocation, nextLocation }) => dirty && currentLocation.pathname !== nextLocation.pathname);
  useEffect(() => {
    if (blocker.state !== 'blocked') return;
    if (window.confirm(translate('ra.message.unsaved_changes'))) blocker.proceed();
    else blocker.reset();
  }, [blocker, translate]);
  useEffect(() => {
    if (!dirty) return undefined;
    const beforeUnload = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener('beforeunload', beforeUnload);
    return () => window.removeEventListener('beforeunload', beforeUnload);
  }, [dirty]);
  return null;
}

/** Asks before a navigation drops unsaved edits (needs a data router; without one, e.g. in unit tests, it does nothing). */
export function UnsavedChangesGuard({ dirty }: { dirty: boolean }) {
  return useCanBlock() ? <Guard dirty={dirty} /> : null;
}
