import { useEffect, useState } from 'react';

interface CopyButtonProps {
  value: string;
  /** What is copied, for screen readers: "Copy agent id". */
  label: string;
}

export function CopyButton({ value, label }: CopyButtonProps) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const timer = setTimeout(() => setState('idle'), 1800);
    return () => clearTimeout(timer);
  }, [state]);

  const copy = async () => {
    setState((await copyText(value)) ? 'copied' : 'failed');
  };
  return (
    <button
      type="button"
      className={`button small ghost copy ${state}`}
      aria-label={label}
      title={state === 'copied' ? 'Copied' : 'Copy'}
      onClick={() => void copy()}
    >
      {state === 'copied' ? <CheckIcon /> : <CopyIcon />}
      <span className="visually-hidden" aria-live="polite">
        {state === 'copied'
          ? 'Copied'
          : state === 'failed'
            ? 'Could not copy: select the text and copy it'
            : ''}
      </span>
    </button>
  );
}

export async function copyText(value: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(value);
    return true;
  } catch {
    // No clipboard API (or refused): the old way, through a selected textarea.
    const area = document.createElement('textarea');
    area.value = value;
    area.setAttribute('readonly', '');
    area.className = 'offscreen';
    document.body.append(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand('copy');
    } catch {
      ok = false;
    }
    area.remove();
    return ok;
  }
}

function CopyIcon() {
  return (
    <svg className="icon" viewBox="0 0 16 16" aria-hidden="true" focusable="false">
      <rect x="5.5" y="5.5" width="8" height="8" rx="1.5" />
      <path d="M10.5 3.5v-.5a1.5 1.5 0 0 0-1.5-1.5H4A1.5 1.5 0 0 0 2.5 3v5A1.5 1.5 0 0 0 4 9.5h.5" />
    </svg>
  );
}

function CheckIcon() {
  return (
    <svg className="icon" viewBox="0 0 16 16" aria-hidden="true" focusable="false">
      <path d="M3 8.5l3 3 7-7" />
    </svg>
  );
}
