/** A form's submit handler: the page is not reloaded, and `action` runs only when `ready()` (nothing blocks it, nothing runs). */
export function submitWhen(ready: () => boolean, action: () => void): (e: SubmitEvent) => void {
  return (e) => {
    e.preventDefault();
    if (ready()) action();
  };
}
