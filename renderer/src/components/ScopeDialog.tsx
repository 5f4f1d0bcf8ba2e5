/**
 * The skills of one SAMVAD approval, asked in a dialog: approving a waiting sender for some skills only, or
 * changing what an approved sender may call (approving again changes its skills, nothing else).
 */
import { useEffect, useState } from 'react';
import type { ApiRequestError } from '../api/client';
import type { SkillView } from '../api/contract';
import { ConfirmDialog } from './ConfirmDialog';
import { scopeProblem, SkillScope } from './SkillScope';
import { ErrorNotice } from './States';

export interface ScopeQuestion {
  sender: string;
  /** Approving a waiting sender, or changing an approved one's skills. */
  kind: 'approve' | 'change';
  /** Its skills now (undefined: every public and approved skill). */
  current: string[] | undefined;
}

interface ScopeDialogProps {
  question: ScopeQuestion | null;
  skills: readonly SkillView[] | undefined;
  busy: boolean;
  error: ApiRequestError | null;
  onConfirm: (sender: string, skills: string[] | undefined) => void;
  onCancel: () => void;
}

export function ScopeDialog({ question, skills, busy, error, onConfirm, onCancel }: ScopeDialogProps) {
  const [value, setValue] = useState<string[] | undefined>(undefined);
  const [tried, setTried] = useState(false);
  // Each question starts from the sender's skills as they are.
  useEffect(() => {
    setValue(question?.current ? [...question.current] : question?.kind === 'approve' ? [] : undefined);
    setTried(false);
  }, [question]);
  const local = scopeProblem(value);
  const fieldError = error?.fields.find((each) => each.field === 'skills')?.message;
  return (
    <ConfirmDialog
      open={question !== null}
      title={
        question?.kind === 'approve'
          ? `Approve ${question.sender} for some skills`
          : `Skills ${question?.sender ?? 'the sender'} may call`
      }
      confirmLabel={question?.kind === 'approve' ? 'Approve' : 'Save skills'}
      busy={busy}
      onCancel={onCancel}
      onConfirm={() => {
        setTried(true);
        if (question && !local) onConfirm(question.sender, value);
      }}
    >
      <p>
        {question?.kind === 'approve'
          ? 'Its calls to the skills ticked go through from now on; any other skill refuses it, and nothing reaches your gateway.'
          : 'From its next call on. Its approval stays as it is otherwise.'}
      </p>
      <SkillScope
        legend="Skills it may call"
        skills={skills}
        value={value}
        error={(tried ? local : undefined) ?? fieldError}
        disabled={busy}
        onChange={(next) => {
          setValue(next);
          setTried(false);
        }}
      />
      {error && !fieldError ? (
        <ErrorNotice
          error={error}
          title={question?.kind === 'approve' ? 'Not approved' : 'Its skills were not changed'}
        />
      ) : null}
    </ConfirmDialog>
  );
}
