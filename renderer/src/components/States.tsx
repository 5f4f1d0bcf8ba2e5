import type { ReactNode } from 'react';
import type { ApiRequestError } from '../api/client';
import { RichText } from './Text';

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <div className="loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}

export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty" data-testid="empty-state">
      <p className="empty-title">{title}</p>
      {children ? <div className="empty-body">{children}</div> : null}
    </div>
  );
}

interface NoticeProps {
  tone: 'error' | 'warning' | 'info' | 'success';
  title?: string;
  message?: string;
  fix?: string;
  children?: ReactNode;
  testId?: string;
}

/** A message and, when known, what to do about it. Errors are announced (role=alert). */
export function Notice({ tone, title, message, fix, children, testId }: NoticeProps) {
  return (
    <div className={`notice ${tone}`} role={tone === 'error' ? 'alert' : 'status'} data-testid={testId}>
      {title ? <p className="notice-title">{title}</p> : null}
      {message ? (
        <p className="notice-message">
          <RichText text={message} />
        </p>
      ) : null}
      {fix ? (
        <p className="notice-fix">
          <span className="fix-label">Fix: </span>
          <RichText text={fix} />
        </p>
      ) : null}
      {children}
    </div>
  );
}

export function ErrorNotice({ error, title }: { error: ApiRequestError; title?: string }) {
  return <Notice tone="error" title={title} message={error.message} fix={error.fix} testId="error-notice" />;
}
