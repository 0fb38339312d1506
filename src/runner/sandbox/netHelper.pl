# First process inside a sandbox that has network (proxy.ts), and the only one before the command:
# it sets the command's limits, listens on 127.0.0.1:<port> in the sandbox's own network
# namespace, hands that listening socket to the host over the IPC channel the host opened, says
# `started` on the status pipe and closes it, then becomes the command (exec: no process stays
# behind it). The channel is an inherited socket pair, so no unix socket is created here, which
# the seccomp filter would refuse; the socket travels in Node's own IPC format, one JSON line with
# the descriptor attached, which the host's child_process reads as a net.Server. Perl because it
# starts in a few milliseconds and perl-base is on every Debian and Ubuntu system; doing the
# status shell's and prlimit's work here saves starting them. No module is loaded, not even
# strict or Errno (`%!` loads it): each costs as much as the rest of the script, so the system
# calls are made by number, the host passing this machine's.
# argv: <status fd> <processes> <data bytes> <prlimit64> <socket> <bind> <listen> <sendmsg>
#       (system call numbers) <port> <program> [args…]

sub fail {
  print STDERR "sandbox: $_[0]\n";
  exit($_[1]);
}

my ($status, $processes, $data, $prlimit, $socket, $bind, $listen, $sendmsg, $port, @command) = @ARGV;
my $channel = delete $ENV{NODE_CHANNEL_FD};
delete $ENV{NODE_CHANNEL_SERIALIZATION_MODE};
fail('the network helper was started without a command or a channel', 125)
  unless @command
  && defined $channel
  && "$channel $status $processes $data $prlimit $socket $bind $listen $sendmsg $port" =~ /^\d+( \d+){9}$/;

# RLIMIT_NPROC (6) and RLIMIT_DATA (2), soft and hard, as prlimit(1) sets them: struct rlimit64 is
# two 64-bit numbers, written as 32-bit halves so a 32-bit perl writes them too.
for ([6, $processes], [2, $data]) {
  my ($resource, $n) = @$_;
  my $low = $n % 4294967296;
  my $high = int(($n - $low) / 4294967296);
  my $limit = pack('V4', $low, $high, $low, $high);
  syscall($prlimit + 0, 0, $resource, $limit, 0) == 0 or fail("the limits could not be set: $!", 125);
}

# AF_INET, SOCK_STREAM | SOCK_CLOEXEC: the command does not inherit the listener.
my $fd = syscall($socket + 0, 2, 1 | 0x80000, 0);
fail("the proxy listener could not start: $!", 125) if $fd < 0;
my $address = pack('S n C4 x8', 2, $port, 127, 0, 0, 1);
syscall($bind + 0, $fd, $address, length $address) == 0 or fail("the proxy listener could not start: $!", 125);
syscall($listen + 0, $fd, 511) == 0 or fail("the proxy listener could not start: $!", 125);

# struct msghdr with one struct cmsghdr carrying SCM_RIGHTS (SOL_SOCKET 1, type 1); size_t is as
# wide as a pointer.
my $word = length pack('P', undef);
my $size = $word == 8 ? 'Q' : 'L';
my $line = qq({"cmd":"NODE_HANDLE","type":"net.Server","msg":{"listening":$port}}\n);
my $iov = pack("P $size", $line, length $line);
my $control = pack("$size l l l", $word + 12, 1, 1, $fd);
$control .= "\0" x ((-length $control) % $word);
my $header = pack("P L x![P] P $size P $size l", undef, 0, $iov, 1, $control, length $control, 0);
$header .= "\0" x ((-length $header) % $word);
my $sent = syscall($sendmsg + 0, $channel + 0, $header, 0);
fail("the proxy listener could not reach the host: $!", 125) unless $sent == length $line;

open(my $ch, '<&=', $channel) or fail("the IPC channel is not open: $!", 125);
close($ch);
# Last before the command: it cannot write to the pipe, nor keep it open.
open(my $st, '>&=', $status) or fail("the status pipe is not open: $!", 125);
syswrite($st, 'started');
close($st);
exec { $command[0] } @command;
fail("$command[0]: " . ($! == 2 ? 'command not found' : "$!"), 127);
