// Package metrics holds what every fedkit loop does the same way with Prometheus: registering
// its collectors into the embedder's registerer, where a second loop of the same kind (one
// per federated type, say) shares the collectors the first one registered; the families every
// loop reports into (reconciles, member requests, work queues) with one vocabulary of label
// names and values; and client-go's work queue metrics provider on that registerer.
//
// Families shared by several loops are defined here and only here: a registry refuses two
// collectors of one name whose help or labels differ, so a loop that spelled its own copy
// would fail to start next to another.
package metrics
