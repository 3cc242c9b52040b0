/** ops/admin/audit.ts operatorActor: who the admin CLI's audit events name as the operator. */
import { describe, expect, it } from 'vitest';
import { operatorActor } from '../../ops/admin/audit.ts';

describe('the operator an audit event names', () => {
  it('is AUDIT_ACTOR when set, whoever the operating system says runs the CLI', () => {
    expect(operatorActor({ AUDIT_ACTOR: 'jane.doe@carrier.example' }, () => 'ec2-user')).toBe(
      'operator:jane.doe@carrier.example',
    );
  });

  it('is else the operating system’s user, each character the trail cannot carry made an underscore', () => {
    expect(operatorActor({}, () => 'jdoe')).toBe('operator:jdoe');
    expect(operatorActor({}, () => 'John Smith\u001b[2J')).toBe('operator:John_Smith__2J');
  });

  it('names a user the operating system has no name for by its uid', () => {
    const unnamed = () => {
      throw new Error('ENOENT: no such file or directory, uv_os_get_passwd');
    };
    expect(operatorActor({}, unnamed)).toMatch(/^operator:uid-(\d+|unknown)$/);
    expect(operatorActor({}, () => '')).toMatch(/^operator:uid-(\d+|unknown)$/);
  });

  it('refuses an AUDIT_ACTOR the trail cannot carry as a usage error that does not repeat it', () => {
    for (const given of ['', 'jane doe', 'jane\u001b[2Jdoe', 'x'.repeat(129)]) {
      expect(() => operatorActor({ AUDIT_ACTOR: given }, () => 'jdoe')).toThrow(
        expect.objectContaining({
          exitCode: 2,
          message: 'environment variable AUDIT_ACTOR must be 1 to 128 letters, digits, ., _, @, + or -',
        }),
      );
    }
  });
});
