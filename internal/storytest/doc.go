// Package storytest reads and runs story files: tests told as blocks of commands, each with
// the output it must print, as etcd-io/raft's interaction tests walk their testdata.
//
//	for _, file := range storytest.Files(t, "testdata/stories/*.txt") {
//		t.Run(filepath.Base(file), func(t *testing.T) {
//			w := newWorld()
//			storytest.Run(t, file, *rewrite, func(b storytest.Block) string { return w.do(t, b.Lines) })
//		})
//	}
//
// A story file is blocks:
//
//	# a comment, kept with the block after it
//	command arg key=value
//	more input lines
//	----
//	the output expected
//	<blank line>
//
// A block is every line before "----" (a command and its input, or several commands: what
// they mean is the test's), and the lines after it up to a blank line, which its run must
// print. Comment lines (#) and blank lines before a block are its comment. The state a test
// keeps carries over from block to block, so a file tells one story. With rewrite, Run writes
// the file back with what the runs printed: review the diff, as for golden files.
//
// The scheduler's scenarios and stories, sync/plan's rollouts and stories and autoscale's
// stories are read with it: the module's one story reader. It imports nothing from the module and is for tests only.
package storytest
