// How a slot changes while C calls it, and how a change lets go of what it removed without ever waiting
// for another thread. Every public change (implement, override, remove, observe, cancel, policy,
// forwarding) is one call of `change(_:)` below, which runs the whole sequence; nothing else runs its
// steps. This folder holds the whole protocol; its C half, the per-thread records of calls in progress, is
// CFFIShim/Retirement/ (Retirement.c; SlotStub.c and Publishing.c for the files named so here).
//
// 0. Forget (`cffi_forget_abandoned_calls`, first, in the caller's own frame): this thread's calls that a
//    longjmp left run nothing any more; see "Calls that never return" below.
// 1. Edit (the caller's closure, under the delegate's lock): the slot's stack, observers, policy or
//    forwarding change in `State`, and the edit says which slots it changed and what it took out of each
//    (`SlotChanges`). Nothing else happens under the lock but steps 2 and 3.
// 2. Publish (`republish`, Publishing.swift): the slot's new plan goes into its cell, then the cheapest
//    function serving the slot into the table, each with one atomic store. A call sees the old state or
//    the new one, never a mix.
// 3. Retire (`retire`, Retirement.swift): what the slot stopped using is marked so that no call starts it
//    any more. A stub's guard is retired (a late call forwards to what the slot holds now, SlotStub.swift);
//    a replaced plan is retired by being replaced in its cell (PlanCell.swift); a removed implementation
//    is marked removed in every plan that still holds it, so that an override's `next` skips it. Each
//    goes on the slot's `retiring`.
// 4. Settle (`settle`, Retirement.swift, after the lock, for each slot left with something retiring; a
//    change that only adds settles nothing): one membarrier, outside the lock (between the change's
//    section and settle's own), makes every thread's record of its calls visible (a call records what it
//    runs, then checks it was not retired: `cffi_enter` in the guarded entries of SlotStub.swift and
//    PlanCell.swift; one of the two sides always sees the other).
//    What no record holds is released at once: the user's closure and captures, and its stub goes back to
//    the slot for the next implementation. What a record holds is deferred to the `Reclaimer`
//    (Reclaimer.swift), which marks the records' entries.
// 5. Notify (`notify`, Forwarding.swift): the delegates forwarding to this one run a
//    change of their own for each slot changed here, which may have started or stopped responding.
//
// Afterwards, without any change:
// - Reclaim: the call that runs a deferred object tests one bit when it leaves (`cffi_leave`), and if set,
//   collects: whatever no record holds any more is released on that thread, as the call returns. Every
//   later change collects too. Nothing waits; a call that never returns delays only its own objects.
// - Wait (`waitForRemovedCalls`, Retirement.swift): for programs that must know no call still runs what
//   they removed. It sleeps on the reclaimer's condition, which every collection that releases something
//   signals.
//
// Calls that never return. A longjmp out of a call leaves its entry in the thread's record. The thread
// forgets it when it lands in `CFunction.call(catchingJumpsTo:)`, or when it judges the entry gone
// (Retirement.c): a later entry, or a change or wait (step 0, from the frame of the method that called
// `change`, at or above the entry's frame), or the entry's return address slot overwritten; and any
// thread judges another thread's entry gone while that thread is blocked in the kernel above it. A thread
// that exits or is cancelled inside a call clears its record as it exits; a forked child clears the
// records of the threads it does not have. Until then, what the entry ran stays deferred, and nothing else
// waits.

//
// What a call finds. C loads the slot's pointer and calls it; a change may come in between, or while the
// call runs. Both paths run the same protocol: the register path enters a stub or a dispatcher through a
// REGISTERS slot of the trampoline table (SlotStub.registerEntry, PlanCell.registerEntry), libffi's path
// through a STATIC_CHAIN slot and libffi's Go entry (cffi_guarded_entry, PlanCell.entry). A call finds:
// - NULL: nothing implements the slot (`.nullWhenUnimplemented`); C's own test sees it and calls nothing.
// - A published stub, the slot's plain top implementation's: it runs that closure.
// - A retired stub: C loaded the pointer before a change replaced or removed that implementation, or kept
//   a copy (fopencookie copies the table). The call records the stub, finds its guard retired and calls
//   what the slot holds now, as if C had loaded it a moment later: another stub, the dispatcher, the
//   original or a forwarding target's function (in registers on the register path, by ffi_call on
//   libffi's); when the slot is NULL now, it returns zero, the result's bytes cleared.
// - A stub reused: the slot's next plain implementation takes an idle retired stub, so a pointer C kept
//   runs that implementation, again as if C had loaded the slot just now.
// - The dispatcher (`.stable`, observers, a stack, a forwarding target): the call records the plan it
//   loaded, checks it is still the cell's (else loads the new one), and runs it: its closures, skipping
//   layers removed since the plan was built; zero when nothing implements the slot. Its pointer never
//   changes while the slot needs it.
// - Forwarded: a slot this delegate does not implement holds its dispatcher while the target responds,
//   and the plan calls the target's slot, whatever that holds at the call; NULL once it stops responding.
// - Running when the change comes: a call that recorded what it runs before the change's membarrier runs
//   to its end with it; the change defers the closure and its captures, released when that call leaves.
//   A thread's first call and nested calls record themselves out of line, at the entry's own frame, read
//   where no compiler moves it (`cffi_this_frame`, Retirement.h): judged by the frame of a function that
//   has returned, a running call was taken for one a longjmp left, and released (issue 57).
// - A trampoline slot freed and handed out again: never one of a delegate that lives. Stubs and
//   dispatchers go back to their slot, not to the table, and their trampoline slots are freed with the
//   delegate. After that, a debug build keeps them stopping with the method's name (Graveyard); a release
//   build frees them, and a later closure may take one, which a call through a pointer kept that long
//   then runs: a delegate must outlive every call C makes through its table.
// Each is checked on both paths, in a release build and in the suite's own, by SlotChangeTests (the
// `states` of Tests/Programs/delegatekit-slot-races; its `stress` races them with fresh and long-lived
// threads); DeadClosureTests checks the debug build's stop.

// cffi_forget_abandoned_calls judges from the frame it is inlined into, so it is called here, not
// through RetirementShim (see there).
import CDelegateKitRetirement

/// What an edit did, for ``SlotTable/change(_:)`` to publish: the slots it changed, and the
/// implementations it took out of each.
struct SlotChanges {
    /// In the order first changed, each once.
    private(set) var slots = FirstInline<Int>()
    /// What each removal took out, in the order removed: the arrays as the edit handed them over. A
    /// change removes from one slot, nearly always once; a dictionary of arrays made two allocations
    /// (its storage and a copied array) and hashed the slot for every removal. (A `FirstInline` list,
    /// which allocates nothing for one removal, made every change that removes nothing dearer to
    /// return and destroy than the one allocation saved.)
    private var removals: [Removal] = []

    /// A struct, not a tuple: a debug build looked a tuple type's metadata up for every change.
    private struct Removal {
        let slot: Int
        let implementations: [Implementation]
    }

    /// Slot `index` changed: it is published again.
    mutating func changed(_ index: Int) {
        if !slots.contains(index) { slots.append(index) }
    }

    /// `implementations` left slot `index`'s stack: they are retired once it is published again.
    mutating func removed(_ implementations: [Implementation], from index: Int) {
        changed(index)
        removals.append(Removal(slot: index, implementations: implementations))
    }

    /// What slot `index`'s edit took out of its stack, or nil for nothing (most changes only add: an
    /// empty array returned and let go counted a reference for each).
    func removed(from index: Int) -> [Implementation]? {
        if removals.isEmpty { return nil }
        var found: [Implementation]?
        for removal in removals where removal.slot == index {
            if found == nil {
                found = removal.implementations
            } else {
                found?.append(contentsOf: removal.implementations)
            }
        }
        return found
    }
}

extension SlotTable {
    /// Changes slots: runs `edit` under the lock, then the rest of the protocol above for every slot the
    /// edit reported. The only way anything changes a slot. An edit that throws must do so before it
    /// changes anything.
    ///
    /// Transparent, so that step 0 runs in the frame of the method that calls this wherever the compiler
    /// inlines it: the shallower the frame, the more calls a longjmp left above it can be judged gone. (A
    /// debug build inlines it only into callers in this file, since it compiles files in separate jobs;
    /// elsewhere step 0 runs in this function's frame, one below, which judges fewer calls gone and never
    /// one that still runs.)
    @_transparent @discardableResult
    func change<Result>(_ edit: (inout State, inout SlotChanges) throws -> Result) rethrows -> Result {
        cffi_forget_abandoned_calls()
        return try applyChange(edit)
    }

    /// Steps 1 to 5 of ``change(_:)``.
    @discardableResult
    func applyChange<Result>(_ edit: (inout State, inout SlotChanges) throws -> Result) rethrows -> Result {
        let (result, changes, retiring, dependents) = try state.withLock { state in
            var changes = SlotChanges()
            let result = try edit(&state, &changes)
            // The slots left with something to settle, with what each has retiring now: a change that
            // only adds retires nothing, and settles nothing. (What another change retires after this
            // section, that change settles.)
            var retiring = FirstInline<(slot: Int, listed: [any Retirable])>()
            changes.slots.forEach { index in
                republish(index, &state)
                if let removed = changes.removed(from: index) { retire(removed, slot: index, &state) }
                // Tested before it is copied: the copy counted a reference to the array for every change.
                if !state.slots[index].retiring.isEmpty { retiring.append((index, state.slots[index].retiring)) }
            }
            // Only where another delegate forwards here (nil, not an empty array, for the rest: nothing
            // to count references to).
            let dependents = changes.slots.isEmpty || state.dependents.isEmpty ? nil : state.dependents
            return (result, changes, retiring, dependents)
        }
        retiring.forEach { settle($0.slot, $0.listed) }
        Reclaimer.shared.collectIfPending()  // every change collects what calls have left since
        // Reading the method's name counted references for each slot changed.
        if let dependents {
            changes.slots.forEach { notify(dependents, descriptor.methods[$0].name) }
        }
        return result
    }
}
