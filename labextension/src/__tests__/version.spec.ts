import { versionMismatch } from '../version';

describe('versionMismatch', () => {
  it('is quiet when the versions agree', () => {
    expect(versionMismatch('0.1.0', '0.1.0')).toBeNull();
  });

  it('names both versions and the fix when they differ', () => {
    const msg = versionMismatch('0.1.0', '0.2.0')!;
    expect(msg).toContain('0.1.0');
    expect(msg).toContain('0.2.0');
    expect(msg).toMatch(/restart JupyterLab/);
    expect(msg).not.toContain('\n');
  });

  it('explains a missing server extension', () => {
    expect(versionMismatch('0.1.0', null)).toMatch(
      /jupyter server extension list/
    );
  });
});
