/**
 * Commands that try to turn a denied command into an allowed one: every separator,
 * substitution, redirection, quoting, brace expansion, env assignment, wrapper, interpreter and
 * path trick. Judged against INJECTION_ALLOWLIST, none may come back `allow`. Shared by the
 * verdict tests and the analysis benchmark.
 */
export const INJECTION_ALLOWLIST = {
  // The git entry opts in to the repository's configuration, so only the command text is under attack here.
  allowlist: [{ pattern: '/usr/bin/ls' }, { pattern: '/usr/bin/git', argPattern: 'status*', trustRepoConfig: true }, { pattern: '/usr/bin/echo' }, { pattern: '/usr/bin/cat' }],
  safeBins: ['cut', 'uniq', 'head', 'tail', 'tr', 'wc', 'grep', 'sort', 'jq', 'awk', 'sed'],
};

export const INJECTION_ATTEMPTS: readonly string[] = [
  // separators
  'ls; rm -rf /', 'ls && rm -rf /', 'ls || rm -rf /', 'ls | sh', 'ls & rm -rf /', 'ls\nrm -rf /', 'ls\r\nrm -rf /', 'ls ;rm x',
  'ls|rm x', 'ls&&rm x', 'ls # comment\nrm x', 'ls |& sh', 'ls ;; rm', "ls ';' && rm x",
  // substitution
  'ls $(rm -rf /)', 'ls `rm -rf /`', 'echo "$(rm -rf /)"', 'echo "`rm`"', 'ls $((1))', 'echo ${x:-$(rm)}', 'ls <(rm x)', 'ls >(rm x)',
  // redirection
  'ls > /etc/passwd', 'echo x >> ~/.bashrc', 'cat < /etc/shadow', 'ls 2>&1 | sh', 'ls 1>&2', 'cat <<<$(rm)', 'echo x >| f', 'ls &> f',
  // quoting
  "ls 'unclosed", 'ls "unclosed', 'ls \\', "echo 'a'\"$(rm)\"", '"r"m x', "'rm' -rf /", 'r\\m x', '"/usr/bin/rm" x',
  // brace expansion and globs in command position
  '{rm,-rf,/}', '/usr/bin/r? x', '/???/???/rm x', '/usr/bin/r[m] x', '/usr/bin/{rm,ls} x',
  // env assignment and variables in command position
  'FOO=1 rm x', 'PATH=/tmp ls', 'LD_PRELOAD=/tmp/x.so ls', '$SHELL -c ls', '${SHELL} x', 'IFS=/ ls', 'x=rm; $x -rf /',
  // wrappers
  'env rm -rf /', 'env -i rm x', 'env -S "rm x"', '/usr/bin/env rm x', 'xargs rm', 'ls | xargs rm', 'ls | xargs -I{} rm {}',
  'nice rm x', 'nice -n 5 sudo rm x', 'timeout 5 rm x', 'timeout --signal=KILL 5 rm x', 'stdbuf -o0 rm x', 'nohup rm x',
  'time rm x', 'sudo ls', 'doas ls', 'busybox rm x', 'busybox sh -c "rm x"', 'toybox rm x', 'setsid rm x', 'ionice rm x',
  'taskset 1 rm x', 'chrt 1 rm x', 'command rm x', 'builtin rm', 'exec rm x', 'eval rm x', '. ./x', 'source x',
  // shells and interpreters
  'sh -c ls', "bash -c 'ls; rm x'", 'sh script.sh', 'bash', 'zsh -c x', 'dash -c x', 'busybox sh', "python3 -c 'import os'",
  "node -e 'x'", "perl -e 'x'", "ruby -e 'x'", "php -r 'x'", 'awk \'BEGIN{system("rm x")}\'', "sed -n '1e rm' x", "sed 'e rm'",
  'jq -n env', 'jq .', 'find . -exec rm {} +', 'find . -delete', 'make', 'git -c core.pager=sh status', 'git push',
  'git status && git push', 'echo x | sh', 'echo x | bash', 'echo x | python3', 'cat x | sh', 'git statusx', 'git -C /etc status',
  'git --exec-path=/tmp status', 'git --config-env=core.pager=X status',
  // shells that run startup files before the program they carry
  'sh -l /usr/bin/ls', 'bash -i /usr/bin/echo', 'dash -i /usr/bin/ls', 'bash --rcfile evil.rc -i /usr/bin/ls',
  'bash --init-file evil.rc -i /usr/bin/echo', 'sh -o history /usr/bin/ls', 'sh +l /usr/bin/ls', 'bash --login /usr/bin/echo',
  'sh -o interactive /usr/bin/ls', 'bash -lc /usr/bin/ls', 'bash +c /usr/bin/ls', 'sh -- /usr/bin/ls', 'env sh -l /usr/bin/ls',
  'rbash -l /usr/bin/ls', 'busybox sh -l /usr/bin/ls',
  // safe-bin abuse
  'wc -l --files0-from=/etc/shadow', 'tail -f /var/log/syslog', 'head -n 1 /etc/shadow', 'sort -o /etc/passwd',
  'sort --compress-program=sh', 'grep -r -e x /', 'grep -f /etc/shadow', 'cut -f 1 /etc/shadow', 'ls | tee /etc/passwd',
  'ls | tail -f', 'tr a b < /etc/shadow', 'uniq in out',
  // safe-bin options the binary parses otherwise than a profile might
  'cd / && uniq --group etc/shadow', 'uniq --group in --group out', 'uniq --gr in', 'uniq --all-repeated in', 'uniq - out',
  'sort --ou=out', 'sort --files0=list', 'sort --temp=dir', 'sort -k1 -o out', 'grep --fi=list -e x', 'grep -e x -r', 'grep -d recurse -e x',
  'wc --files0=list', 'head -5 in', 'head in -n 1', 'head -n 1 -- in', 'tail +5 in', 'tail -l in', 'tail -c 5 in', 'cut -f1 -- in',
  // path tricks
  './ls -rf x', '/usr/bin/../bin/rm x', '~/bin/rm', '../../usr/bin/rm x', './wc -l', 'rm\u00a0x', 'ls；rm x',
  // heredocs
  "sh <<'EOF'\nrm -rf /\nEOF", "cat <<'EOF' | sh\nrm -rf /\nEOF", 'cat <<EOF\n$(rm -rf /)\nEOF', "bash <<'X'\nid\nX",
  // line continuation
  'ls \\\n; rm x', 'l\\\ns',
  // control
  'warden approvals resolve a allow-always', '/approve abc allow-always',
];

/** Everyday commands that the same allowlist lets through. */
export const ALLOWED_COMMANDS: readonly string[] = [
  'ls', 'ls -la', 'ls | wc -l', 'git status', 'git status -s && ls', 'echo hello world', 'cat README.md | head -n 20',
  'ls | sort -k 2 | uniq -c', 'cat log.txt | grep -e ERROR | wc -l', 'echo "a b" | tr a-z A-Z', 'cat data.csv | cut -d , -f 1 | sort -k 1',
  'cd src && ls', 'test -f package.json && echo yes', 'ls *.txt', 'nice -n 5 ls', 'timeout 10 git status',
];
