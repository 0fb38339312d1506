# First process inside a sandbox that has network (proxy.ts): listens on 127.0.0.1:<port> in the
# sandbox's own network namespace, hands that listening socket to the host over the IPC channel
# the host opened, then becomes the command (exec: no process stays behind it). The channel is an
# inherited socket pair, so no unix socket is created here, which the seccomp filter would refuse;
# the socket travels in Node's own IPC format, one JSON line with the descriptor attached, which
# the host's child_process reads as a net.Server. Perl because it starts in a few milliseconds
# and perl-base is on every Debian and Ubuntu system; Socket is its only module.
# argv: <port> <sendmsg's system call number on this architecture> <program> [args…]
use strict;
use warnings;
use Socket qw(PF_INET SOCK_STREAM SOL_SOCKET SOMAXCONN pack_sockaddr_in inet_aton);

sub fail {
  print STDERR "sandbox: $_[0]\n";
  exit($_[1]);
}

my ($port, $sendmsg, @command) = @ARGV;
my $channel = delete $ENV{NODE_CHANNEL_FD};
delete $ENV{NODE_CHANNEL_SERIALIZATION_MODE};
fail('the network helper was started without a command or a channel', 125)
  unless @command && defined $channel && $channel =~ /^\d+$/ && $sendmsg =~ /^\d+$/;

socket(my $listener, PF_INET, SOCK_STREAM, 0) or fail("the proxy listener could not start: $!", 125);
bind($listener, pack_sockaddr_in($port, inet_aton('127.0.0.1')))
  or fail("the proxy listener could not start: $!", 125);
listen($listener, SOMAXCONN) or fail("the proxy listener could not start: $!", 125);

# struct msghdr with one struct cmsghdr carrying SCM_RIGHTS (1); size_t is as wide as a pointer.
my $word = length pack('P', undef);
my $size = $word == 8 ? 'Q' : 'L';
my $line = qq({"cmd":"NODE_HANDLE","type":"net.Server","msg":{"listening":$port}}\n);
my $iov = pack("P $size", $line, length $line);
my $control = pack("$size l l l", $word + 12, SOL_SOCKET, 1, fileno($listener));
$control .= "\0" x ((-length $control) % $word);
my $header = pack("P L x![P] P $size P $size l", undef, 0, $iov, 1, $control, length $control, 0);
$header .= "\0" x ((-length $header) % $word);
my $sent = syscall($sendmsg + 0, $channel + 0, $header, 0);
fail("the proxy listener could not reach the host: $!", 125) unless $sent == length $line;

# The listener closes on exec (perl marks its descriptors so); the channel is closed here.
open(my $ch, '<&=', $channel) or fail("the IPC channel is not open: $!", 125);
close($ch);
{
  no warnings 'exec';
  exec { $command[0] } @command;
}
fail("$command[0]: " . ($!{ENOENT} ? 'command not found' : "$!"), 127);
