package lockorder

import "context"

type Warehouse struct {
	self *WarehouseLocked
}

// Move takes two keys in one call. The runtime takes them in sorted order,
// bin:<from> before crate:<to>, and holds the bin while it waits for the
// crate.
//
//lock:mutex key=crate:<to> key=bin:<from>
func (w *Warehouse) Move(ctx context.Context, from, to string) error { return nil }

// Pack holds the crate, then fills a bin: crate, then bin.
//
//lock:mutex key=crate:<id>
func (w *Warehouse) Pack(ctx context.Context, id string) error {
	return w.self.Fill(ctx, id)
}

// Fill takes the bin lock.
//
//lock:mutex key=bin:<id>
func (w *Warehouse) Fill(ctx context.Context, id string) error { return nil }
