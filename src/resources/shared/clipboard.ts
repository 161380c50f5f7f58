/** Copies text; resolves false when the browser refuses (the caller shows it for manual copying). */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}
