package lease

import (
	"errors"

	"github.com/go-logr/logr"
)

// electorLogger is the logger client-go's elector gets: logger, except that the elector's
// error for a write this process refused itself (errNotAdmitted: Shards keeping it to its
// share) is logged at V(4), as the elector logs an ordinary lost race. Without it a process
// at its share would log an error every RetryPeriod for each free shard a peer is about to
// take.
func electorLogger(logger logr.Logger) logr.Logger {
	if logger.GetSink() == nil {
		return logger
	}
	return logger.WithSink(quietSink{logger.GetSink()})
}

// quietSink passes everything to LogSink but the errors of refused acquisitions.
type quietSink struct{ logr.LogSink }

func (q quietSink) Error(err error, msg string, kv ...any) {
	if errors.Is(err, errNotAdmitted) {
		if q.Enabled(4) {
			q.Info(4, msg, append(kv, "reason", err.Error())...)
		}
		return
	}
	q.LogSink.Error(err, msg, kv...)
}

func (q quietSink) WithValues(kv ...any) logr.LogSink { return quietSink{q.LogSink.WithValues(kv...)} }

func (q quietSink) WithName(name string) logr.LogSink { return quietSink{q.LogSink.WithName(name)} }
