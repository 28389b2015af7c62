//go:build nolockgen

package peers

import "fmt"

// Built with -tags nolockgen, the harness measures only the other libraries:
// useful while lockgen's runtime does not compile. Every lockgen peer then
// reports ErrUnavailable.

type lockgenKind struct{ setting, notes string }

var (
	lockgenMutex     = lockgenKind{"mutex", "built with -tags nolockgen"}
	lockgenFair      = lockgenKind{"fair", "built with -tags nolockgen"}
	lockgenRead      = lockgenKind{"read", "built with -tags nolockgen"}
	lockgenWrite     = lockgenKind{"write", "built with -tags nolockgen"}
	lockgenSemaphore = lockgenKind{"semaphore", "built with -tags nolockgen"}
)

func lockgenPeer(k lockgenKind) Peer {
	return Peer{
		Library: "lockgen", Setting: k.setting, Notes: k.notes, AutoRenew: true,
		open: func(Config) (Client, error) {
			return nil, fmt.Errorf("%w: built with -tags nolockgen", ErrUnavailable)
		},
	}
}

func lockgenRueidisPeer(k lockgenKind) Peer {
	p := lockgenPeer(k)
	p.Setting += "-rueidis"
	return p
}

func lockgenAutoPipelinePeer(k lockgenKind) Peer {
	p := lockgenPeer(k)
	p.Setting += "-autopipeline"
	return p
}

func lockgenShortIDsPeer() Peer {
	p := lockgenPeer(lockgenMutex)
	p.Setting += "-shortids"
	return p
}
