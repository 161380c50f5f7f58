// What the pages a sign-in provider sends the browser back to share (GitHub's
// /oauth/github, single sign-on's /oauth/oidc): the line that says the answer
// is being checked, and the way on to the code step of /login for an account
// with two-factor sign-in.
import { Box, CircularProgress, Typography } from '@mui/material';
import type { NavigateFunction } from 'react-router-dom';
import { needsSecondFactor } from '../authProvider';

/** When the sign-in failed only for want of the second factor, goes on to its step and returns true. */
export function goToSecondFactor(error: unknown, navigate: NavigateFunction): boolean {
  if (!needsSecondFactor(error)) return false;
  void navigate('/login?two_factor=1');
  return true;
}

/** A spinner and `text`; `label` names the spinner. */
export function CallbackWaiting({ text, label }: { text: string; label?: string }) {
  return (
    <Box sx={{ display: 'flex', alignItems: 'center', justifyContent: 'center', gap: 2, py: 10 }}>
      <CircularProgress size={22} aria-label={label} />
      <Typography>{text}</Typography>
    </Box>
  );
}
