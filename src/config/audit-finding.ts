/** One audit finding, as `warden audit` prints it. */
export interface AuditFinding {
  id: string;
  severity: 'info' | 'warn' | 'critical';
  message: string;
  fix: string;
}
