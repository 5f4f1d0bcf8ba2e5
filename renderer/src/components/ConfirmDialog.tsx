import { useEffect, useId, useRef, type ReactNode } from 'react';

interface ConfirmDialogProps {
  open: boolean;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  tone?: 'danger' | 'primary';
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}

/**
 * A modal confirmation on the native <dialog>: showModal() makes the rest of the page inert (focus stays
 * inside) and Escape cancels. The confirm button takes focus on open.
 */
export function ConfirmDialog(props: ConfirmDialogProps) {
  const { open, title, children, confirmLabel, tone = 'primary', busy = false, onConfirm, onCancel } = props;
  const dialog = useRef<HTMLDialogElement>(null);
  const confirm = useRef<HTMLButtonElement>(null);
  const titleId = useId();
  const bodyId = useId();

  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (open && !element.open) {
      if (typeof element.showModal === 'function') element.showModal();
      else element.setAttribute('open', '');
      confirm.current?.focus();
    } else if (!open && element.open) {
      if (typeof element.close === 'function') element.close();
      else element.removeAttribute('open');
    }
  }, [open]);

  return (
    <dialog
      ref={dialog}
      className="dialog"
      aria-labelledby={titleId}
      aria-describedby={bodyId}
      onCancel={(event) => {
        // Escape: we close it ourselves, through the parent's state.
        event.preventDefault();
        if (!busy) onCancel();
      }}
      onKeyDown={(event) => {
        if (event.key === 'Escape' && !busy) {
          event.preventDefault();
          onCancel();
        }
      }}
    >
      {open ? (
        <form
          method="dialog"
          onSubmit={(event) => {
            event.preventDefault();
            onConfirm();
          }}
        >
          <h2 id={titleId} className="dialog-title">
            {title}
          </h2>
          <div id={bodyId} className="dialog-body">
            {children}
          </div>
          <div className="dialog-actions">
            <button type="button" className="button" onClick={onCancel} disabled={busy}>
              Cancel
            </button>
            <button ref={confirm} type="submit" className={`button ${tone}`} disabled={busy} autoFocus>
              {busy ? 'Working…' : confirmLabel}
            </button>
          </div>
        </form>
      ) : null}
    </dialog>
  );
}
