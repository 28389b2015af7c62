package otherfileerrors

import "context"

type fake struct{}

//lock:mutex key=fake
func (f *fake) Pay(ctx context.Context) error { return nil }
