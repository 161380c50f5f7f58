import { useEffect, useState } from 'react';

/** A countdown that locks a button (e-mail code, reset mail) for `seconds` after use. */
export function useCooldown(seconds = 30) {
  const [left, setLeft] = useState(0);
  useEffect(() => {
    if (left <= 0) return;
    const timer = setTimeout(() => setLeft((value) => value - 1), 1000);
    return () => clearTimeout(timer);
  }, [left]);
  return { left, active: left > 0, start: () => setLeft(seconds) };
}
