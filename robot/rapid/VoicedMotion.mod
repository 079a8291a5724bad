MODULE VoicedMotion
    !
    ! voiced: the motion task (T_ROB1) of the controller side of docs/PROTOCOL.md.
    !
    ! It owns the MOTION channel: HELLO and the numbered primitive lines
    ! (<seq> MOVEL ..., MOVEJ, GRIP, WAIT, SPEED, ATTACH, DETACH, CALL) with their
    ! ACK / DONE / ERR replies, the session ledger (exactly-once) and the failure
    ! latch. VoicedControl.mod (a second, non-motion task) owns the CONTROL channel
    ! and halts this task through the PERS data and the signal doVoicedStop below.
    ! The simulator (robot/simulator.py, robot/simcore.py, robot/simledger.py) is
    ! the reference: every reply here mirrors one there.
    !
    ! NOT RUN ON A CONTROLLER YET: written against the RAPID manuals and public
    ! RAPID code; docs/RAPID.md lists what must be verified on the GoFa.
    !
    ! ACK on receipt and the window. RAPID executes one thing at a time: while a
    ! MoveL runs, this task cannot read its socket. The daemon pipelines up to
    ! `window` lines; they wait in the controller's TCP receive buffer. Between
    ! two primitives VdPump reads everything that has arrived, ACKs each new line
    ! and queues it (qSeq...), so an ACK comes late by at most one primitive. The
    ! daemon counts lines without a TERMINAL reply against its window, so a late
    ! ACK never stalls it (docs/PROTOCOL.md: "An ACK may come late"). Before a
    ! failed line is answered and before a halt, the buffer is read once more, so
    ! lines that had already arrived are "queued" and get "cleared ..." exactly as
    ! in the simulator, which reads its socket at once.
    !
    ! STOP. VoicedControl sets vdHalted, counts vdStopReq up and sets doVoicedStop
    ! to 1. ISignalDO runs trVoicedStop in this task at once, even in the middle
    ! of a MoveL: StopMove; ClearPath; StartMove; ExitCycle. ExitCycle ends every
    ! instruction under way (the interrupted MoveL included) and starts main again
    ! with all variables kept; VdServe then sees the stop request and answers
    ! "interrupted by <reason>" for the cut line, "cleared by <reason>" for the
    ! queue, and acknowledges (vdStopAck := vdStopReq). Only then does the control
    ! task send STOPPED <last_done>. A RAISE in a TRAP would go to the system error
    ! handler and stop the program (RAPID reference manual, RAISE), so it is not
    ! used. See docs/RAPID.md, "The STOP interrupt".
    !

    ! ---- connection (edit for the installation) ----------------------------
    ! RAPID cannot bind a wildcard address: this must be an address of the
    ! controller itself, on the network the daemon connects from (192.168.125.1
    ! is the service/management port; 127.0.0.1 for a virtual controller in
    ! RobotStudio). The control channel is vdMotionPort + 1 (VoicedControl).
    PERS string vdAddress:="192.168.125.1";
    PERS num vdMotionPort:=1025;
    ! This controller's identity in the greeting ([A-Za-z0-9_], at most 32):
    ! the daemon keeps the saved cell state per identity. One per robot.
    PERS string vdName:="rapid_gofa";
    ! The only client addresses let in, on both channels (all empty: any).
    ! RAPID has no keyed hash, so this is its check (docs/RAPID.md).
    PERS string vdAllowPeer{4}:=["","","",""];

    ! ---- shared with VoicedControl.mod: identical declarations there --------
    ! (PERS data of the same name and type are one datum in all tasks.)
    ! The TCP and work object of every move and of POSE (CRobT).
    PERS tooldata vdTool:=[TRUE,[[0,0,0],[1,0,0,0]],[0.001,[0,0,0.001],[1,0,0,0],0,0,0]];
    PERS wobjdata vdWobj:=[FALSE,TRUE,"",[[0,0,0],[1,0,0,0]],[[0,0,0],[1,0,0,0]]];
    ! Halt state: set by VoicedControl (STOP, heartbeat, disconnect), cleared by RESUME.
    PERS bool vdHalted:=FALSE;
    PERS string vdHaltReason:="";
    ! A halt request: VoicedControl writes the reason, then counts vdStopReq up;
    ! this task answers the lines it cut and sets vdStopAck:=vdStopReq.
    PERS string vdStopReason:="";
    PERS num vdStopReq:=0;
    PERS num vdStopAck:=0;
    ! What STATE reports: last_done, busy (a line queued or executing), the
    ! gripper opening (mm), the tool on the flange ("" = none).
    PERS num vdLastDone:=0;
    PERS bool vdBusy:=FALSE;
    PERS num vdStatusCount:=0;
    PERS num vdGripper:=0;
    PERS string vdToolName:="";

    ! ---- the cell (edit for the cell; the defaults are the sandwich cell's
    ! [limits], robot/cells/sandwich.toml, which config.toml selects) ---------
    PERS pos vdWsMin:=[100,-400,-20];
    PERS pos vdWsMax:=[800,450,700];
    PERS num vdMaxSpeed:=500;
    PERS num vdGripMin:=0;
    PERS num vdGripMax:=110;
    ! Tools on stands (ATTACH/DETACH): name and stand position, "" = unused slot.
    ! The weld cell would be: ["Camera","Welder",...] at [250,-350,120] and
    ! [400,-350,120].
    PERS string vdToolNames{8}:=["","","","","","","",""];
    PERS pos vdToolStands{8}:=[[0,0,0],[0,0,0],[0,0,0],[0,0,0],
        [0,0,0],[0,0,0],[0,0,0],[0,0,0]];
    ! Routines CALL may run (only these: nothing else in the task can be called)
    ! and the tool each needs ("" = none). The weld cell would be:
    ! ["tack_weld","camera_inspection",...] needing ["Welder","Camera",...].
    PERS string vdRoutineNames{16}:=["","","","","","","","","","","","","","","",""];
    PERS string vdRoutineTools{16}:=["","","","","","","","","","","","","","","",""];

    ! ---- timing (s) -----------------------------------------------------------
    ! Receive timeout while idle; while lines are queued, between two primitives.
    PERS num vdPollTime:=0.05;
    PERS num vdDrainTime:=0.01;
    ! How long GRIP and ATTACH/DETACH wait for the hardware (simulator: 0.3, 0.8).
    PERS num vdGripTime:=0.3;
    PERS num vdToolTime:=0.8;

    ! ---- protocol constants (tests/robot/test_rapid.py checks them) ----------
    ! How long a new client has to answer the greeting (s).
    CONST num VD_HANDSHAKE_TIME:=5;
    CONST num VD_MAX_SEQ:=999999;
    CONST num VD_MAX_LINE:=79;
    CONST num VD_QUEUE:=72;
    CONST num VD_HISTORY:=128;
    CONST num VD_MAX_TOK:=12;
    CONST num VD_STAND_XY:=15;
    CONST num VD_STAND_Z:=10;
    CONST string VD_NL:="\0A";
    CONST string VD_DIGITS:="0123456789";
    CONST string VD_HEX:="0123456789abcdef";
    CONST string VD_NAME_CHARS:="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_";
    ! Printable ASCII 0x20..0x7E, in two parts (a string holds 80 characters).
    CONST string VD_PRINT_A:=" !""#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNO";
    CONST string VD_PRINT_B:="PQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~";
    CONST num K_MOVEL:=1;
    CONST num K_MOVEJ:=2;
    CONST num K_GRIP:=3;
    CONST num K_WAIT:=4;
    CONST num K_SPEED:=5;
    CONST num K_ATTACH:=6;
    CONST num K_DETACH:=7;
    CONST num K_CALL:=8;

    ! ---- connection state ------------------------------------------------------
    LOCAL VAR bool bInit:=FALSE;
    LOCAL VAR socketdev sockSrv;
    LOCAL VAR socketdev sockCli;
    LOCAL VAR bool bConnected:=FALSE;
    ! Counts connections: a reply goes only to the connection that sent (or
    ! re-sent) its line; replies owed to a closed connection are dropped.
    LOCAL VAR num nConnGen:=0;
    ! The part of a line received so far, and whether it is already too long.
    LOCAL VAR string sPart:="";
    LOCAL VAR bool bOverlong:=FALSE;
    LOCAL VAR intnum irStop;

    ! ---- the ledger (robot/simledger.py) ---------------------------------------
    LOCAL VAR bool bSession:=FALSE;
    LOCAL VAR string sSession:="";
    LOCAL VAR num nLastQueued:=0;
    LOCAL VAR bool bLatched:=FALSE;
    LOCAL VAR num nLatchedBy:=0;
    ! Completed seqs of this session (the last VD_HISTORY; 0 = empty slot).
    LOCAL VAR num hSeq{VD_HISTORY};
    LOCAL VAR num hNext:=1;

    ! ---- the queue of ACKed lines (a ring) --------------------------------------
    LOCAL VAR num qHead:=1;
    LOCAL VAR num qCount:=0;
    LOCAL VAR num qSeq{VD_QUEUE};
    LOCAL VAR num qKind{VD_QUEUE};
    LOCAL VAR num qArg{VD_QUEUE,8};
    LOCAL VAR string qName{VD_QUEUE};
    LOCAL VAR num qGen{VD_QUEUE};

    ! ---- the line executing (nExecSeq = 0: none) --------------------------------
    LOCAL VAR num nExecSeq:=0;
    LOCAL VAR num nExecGen:=0;
    LOCAL VAR num nExecKind:=0;
    LOCAL VAR num eArg{8};
    LOCAL VAR string sExecName:="";
    ! TRUE only around the instruction that moves or waits: the STOP trap cuts
    ! it (ExitCycle) only then, never in the middle of the bookkeeping.
    LOCAL VAR bool bExecuting:=FALSE;
    LOCAL VAR num nDefaultSpeed:=100;

    ! ---- the line being parsed ----------------------------------------------------
    LOCAL VAR string vTok{VD_MAX_TOK};
    LOCAL VAR num vNTok:=0;
    LOCAL VAR num pKind:=0;
    LOCAL VAR num pArg{8};
    LOCAL VAR string pName:="";
    ! A failure (code and reason) from a field reader or from a check.
    LOCAL VAR string vFailCode:="";
    LOCAL VAR string vFailText:="";
    ! TRUE while the halt handling reads the lines that had already arrived: they
    ! were sent before the halt and are queued (then cleared), not refused.
    LOCAL VAR bool bStopDrain:=FALSE;

    PROC main()
        ! Entered at PP to main and again after every ExitCycle of the STOP trap
        ! (then every variable still holds its value: nothing is set up twice).
        IF NOT bInit THEN
            VdInit;
        ENDIF
        bExecuting:=FALSE;
        IF nExecSeq<>0 AND vdStopReq=vdStopAck THEN
            ! Cut without a request from VoicedControl (doVoicedStop set by hand):
            ! halt all the same, as the simulator does for any cut line.
            VdHaltSelf "stop";
        ENDIF
        VdServe;
    ENDPROC

    LOCAL PROC VdInit()
        ConfL\Off;
        ConfJ\Off;
        SingArea\Wrist;
        SocketClose sockCli;
        SocketClose sockSrv;
        SocketCreate sockSrv;
        SocketBind sockSrv,vdAddress,vdMotionPort;
        SocketListen sockSrv;
        bConnected:=FALSE;
        IDelete irStop;
        CONNECT irStop WITH trVoicedStop;
        ISignalDO doVoicedStop,1,irStop;
        ! A request left over from before this start: nothing of it is running.
        vdStopAck:=vdStopReq;
        vdBusy:=FALSE;
        Incr vdStatusCount;
        TPWrite "VOICED: motion channel on "+vdAddress+":"+NumToStr(vdMotionPort,0);
        bInit:=TRUE;
    ENDPROC

    LOCAL TRAP trVoicedStop
        ! doVoicedStop went to 1: STOP, heartbeat loss or lost control link.
        IF bExecuting THEN
            StopMove;
            WaitRob\ZeroSpeed;
            ClearPath;
            StartMove;
            ExitCycle;
        ENDIF
        ! Not executing: VdServe sees vdStopReq at its next turn (within vdPollTime).
    ENDTRAP

    ! ======================================================================
    ! The loop
    ! ======================================================================

    LOCAL PROC VdServe()
        WHILE TRUE DO
            ! a halt first: a line cut by the trap (ExitCycle) is answered now
            IF vdStopReq<>vdStopAck THEN
                VdHalt;
            ENDIF
            IF NOT bConnected THEN
                IF qCount>0 THEN
                    VdAccept vdDrainTime;
                ELSE
                    VdAccept vdPollTime;
                ENDIF
            ENDIF
            IF bConnected THEN
                IF qCount>0 THEN
                    VdPump vdDrainTime;
                ELSE
                    VdPump vdPollTime;
                ENDIF
            ENDIF
            IF vdStopReq=vdStopAck AND nExecSeq=0 AND qCount>0 AND NOT vdHalted THEN
                VdExecuteNext;
            ENDIF
            VdBusyUpdate;
        ENDWHILE
    ENDPROC

    LOCAL PROC VdAccept(num wait)
        VAR string peer;
        SocketClose sockCli;
        SocketAccept sockSrv,sockCli\ClientAddress:=peer\Time:=wait;
        bConnected:=TRUE;
        Incr nConnGen;
        sPart:="";
        bOverlong:=FALSE;
        IF NOT VdGreet(peer) THEN
            bConnected:=FALSE;
            SocketClose sockCli;
            RETURN;
        ENDIF
        TPWrite "VOICED: motion client "+peer;
    ERROR
        IF ERRNO=ERR_SOCK_TIMEOUT THEN
            SkipWarn;
            RETURN;
        ENDIF
        RAISE;
    ENDPROC

    ! The handshake, as VoicedControl's VcGreet: no challenge (RAPID has no
    ! keyed hash), an allowed address only, and only after its AUTH line.
    LOCAL FUNC bool VdGreet(string peer)
        VAR string chunk;
        VdSend "VOICED 1 rapid "+vdName+" -";
        IF NOT VdPeerAllowed(peer) THEN
            ErrWrite\W,"voiced: client refused","Not in vdAllowPeer: "+peer;
            VdAuthRefuse "address not allowed";
            RETURN FALSE;
        ENDIF
        chunk:="";
        SocketReceive sockCli\Str:=chunk\Time:=VD_HANDSHAKE_TIME;
        IF StrLen(chunk)<5 THEN
            chunk:="-----";
        ENDIF
        IF StrPart(chunk,1,5)<>"AUTH " THEN
            VdAuthRefuse "expected AUTH first";
            RETURN FALSE;
        ENDIF
        VdSend "AUTHOK";
        RETURN bConnected;
    ERROR
        SkipWarn;
        RETURN FALSE;
    ENDFUNC

    LOCAL FUNC bool VdPeerAllowed(string peer)
        VAR bool any:=TRUE;
        FOR i FROM 1 TO Dim(vdAllowPeer,1) DO
            IF vdAllowPeer{i}<>"" THEN
                any:=FALSE;
                IF vdAllowPeer{i}=peer THEN
                    RETURN TRUE;
                ENDIF
            ENDIF
        ENDFOR
        RETURN any;
    ENDFUNC

    ! ERR AUTH carries no seq: it answers the handshake, not a line.
    LOCAL PROC VdAuthRefuse(string reason)
        vFailCode:="AUTH";
        VdSend VdFitJoin("ERR "+vFailCode,reason);
    ENDPROC

    ! The client is gone (simulator.py _lost_client): halt "disconnect", so that
    ! nothing queued runs unseen; the new client finds the controller halted.
    LOCAL PROC VdLostClient()
        VAR string reason:="disconnect";
        VdDropClient;
        IF NOT vdHalted THEN
            vdHaltReason:=reason;
            vdHalted:=TRUE;
        ENDIF
        vdStopReason:=reason;
        VdClearQueue "cleared by "+reason;
        VdBusyUpdate;
        Incr vdStatusCount;
    ENDPROC

    LOCAL PROC VdDropClient()
        IF bConnected THEN
            TPWrite "VOICED: motion client gone";
        ENDIF
        bConnected:=FALSE;
        SocketClose sockCli;
        sPart:="";
        bOverlong:=FALSE;
    ENDPROC

    ! Read what has arrived: wait up to `wait` s for the first piece, then take
    ! whatever follows at once. Stops when the queue is full (the rest waits in
    ! the socket buffer: the daemon never has more than its window in flight).
    LOCAL PROC VdPump(num wait)
        VAR string chunk;
        VAR num t;
        VAR bool more:=TRUE;
        t:=wait;
        ! (no call with side effects in a condition: RAPID may evaluate every
        ! operand of AND)
        WHILE more DO
            more:=FALSE;
            IF bConnected AND qCount<VD_QUEUE THEN
                IF VdRecv(chunk,t) THEN
                    VdFeed chunk;
                    t:=vdDrainTime;
                    more:=TRUE;
                ENDIF
            ENDIF
        ENDWHILE
    ENDPROC

    LOCAL FUNC bool VdRecv(INOUT string chunk,num wait)
        chunk:="";
        SocketReceive sockCli\Str:=chunk\Time:=wait;
        RETURN TRUE;
    ERROR
        IF ERRNO=ERR_SOCK_TIMEOUT THEN
            SkipWarn;
            RETURN FALSE;
        ENDIF
        SkipWarn;
        ! ERR_SOCK_CLOSED or any other socket error: the client is gone, and the
        ! controller halts (docs/PROTOCOL.md).
        VdLostClient;
        RETURN FALSE;
    ENDFUNC

    ! Split a received piece at the newlines; a line longer than 79 characters
    ! (80 bytes with its newline) is skipped up to its newline and refused.
    LOCAL PROC VdFeed(string chunk)
        VAR num len;
        VAR num pos:=1;
        VAR num nl;
        VAR num n;
        len:=StrLen(chunk);
        WHILE pos<=len DO
            nl:=StrFind(chunk,pos,VD_NL);
            n:=nl-pos;
            ! (while bOverlong the rest of a line that is too long is skipped)
            IF NOT bOverlong THEN
                IF StrLen(sPart)+n>VD_MAX_LINE THEN
                    bOverlong:=TRUE;
                ELSEIF n>0 THEN
                    sPart:=sPart+StrPart(chunk,pos,n);
                ENDIF
            ENDIF
            IF nl<=len THEN
                IF bOverlong THEN
                    VdRefuse 0,"PARSE","longer than 80 bytes with its newline";
                ELSE
                    VdLine sPart;
                ENDIF
                sPart:="";
                bOverlong:=FALSE;
            ENDIF
            pos:=nl+1;
        ENDWHILE
    ENDPROC

    ! ======================================================================
    ! Parsing (robot/protocol/codec.py parse_line, motion channel)
    ! ======================================================================

    LOCAL PROC VdLine(string line)
        VAR num bad;
        IF StrLen(line)=0 THEN
            VdRefuse 0,"PARSE","empty line";
            RETURN;
        ENDIF
        bad:=VdBadByte(line);
        IF bad>=0 THEN
            VdRefuse 0,"PARSE","byte 0x"+VdHex2(bad)+" is not printable ASCII";
            RETURN;
        ENDIF
        IF NOT VdSplit(line) THEN
            VdRefuse 0,"PARSE","empty field (leading, trailing or double space)";
            RETURN;
        ENDIF
        IF StrFind(vTok{1},1,VD_DIGITS)=1 THEN
            VdNumbered;
        ELSE
            VdUnnumbered;
        ENDIF
    ENDPROC

    ! HELLO <session>; anything else without a seq first is refused with seq 0.
    LOCAL PROC VdUnnumbered()
        VAR string kw;
        kw:=vTok{1};
        IF kw="HELLO" THEN
            IF vNTok=2 THEN
                IF VdReadSession(vTok{2}) THEN
                    VdHello vTok{2};
                ELSE
                    VdRefuse 0,vFailCode,vFailText;
                ENDIF
            ELSEIF vNTok=3 THEN
                VdRefuse 0,"PARSE","HELLO with last_done is not a request";
            ELSE
                VdRefuse 0,"PARSE","HELLO takes 1 or 2 fields, not "+NumToStr(vNTok-1,0);
            ENDIF
        ELSEIF kw="AUTH" THEN
            VdRefuse 0,"PARSE","AUTH answers the greeting only";
        ELSEIF kw="VOICED" OR kw="AUTHOK" THEN
            VdRefuse 0,"PARSE",kw+" is not a request";
        ELSE
            VdRefuse 0,"PARSE","unknown keyword '"+VdClip(kw,20)+"' on the motion channel";
        ENDIF
    ENDPROC

    LOCAL PROC VdNumbered()
        VAR num seq;
        VAR string kw;
        VAR num nf;
        VAR num want;
        IF NOT VdReadInt(vTok{1},0,VD_MAX_SEQ,"seq",seq) THEN
            ! an unreadable seq: PARSE with seq 0 (out of range included)
            VdRefuse 0,"PARSE",vFailText;
            RETURN;
        ENDIF
        IF vNTok<2 THEN
            VdRefuse seq,"PARSE","no keyword after the seq";
            RETURN;
        ENDIF
        kw:=vTok{2};
        nf:=vNTok-2;
        TEST kw
        CASE "MOVEL":
            pKind:=K_MOVEL;
            want:=8;
        CASE "MOVEJ":
            pKind:=K_MOVEJ;
            want:=8;
        CASE "GRIP":
            pKind:=K_GRIP;
            want:=1;
        CASE "WAIT":
            pKind:=K_WAIT;
            want:=1;
        CASE "SPEED":
            pKind:=K_SPEED;
            want:=1;
        CASE "ATTACH":
            pKind:=K_ATTACH;
            want:=1;
        CASE "DETACH":
            pKind:=K_DETACH;
            want:=0;
        CASE "CALL":
            pKind:=K_CALL;
            want:=1;
        CASE "ACK","DONE","ERR":
            ! replies, not requests
            VdRefuse seq,"PARSE",kw+" is not a request";
            RETURN;
        DEFAULT:
            VdRefuse seq,"PARSE","unknown keyword '"+VdClip(kw,20)+"' on the motion channel";
            RETURN;
        ENDTEST
        IF nf<>want THEN
            VdRefuse seq,"PARSE",kw+" takes "+NumToStr(want,0)+" fields, not "+NumToStr(nf,0);
            RETURN;
        ENDIF
        IF seq<1 THEN
            VdRefuse 0,"PARSE","seq 0 outside 1..999999";
            RETURN;
        ENDIF
        IF NOT VdReadArgs() THEN
            VdRefuse seq,vFailCode,vFailText;
            RETURN;
        ENDIF
        VdAdmit seq;
    ENDPROC

    ! The fields after the keyword into pArg / pName (robot/protocol/wire.py).
    LOCAL FUNC bool VdReadArgs()
        VAR num norm;
        pName:="";
        FOR k FROM 1 TO 8 DO
            pArg{k}:=0;
        ENDFOR
        TEST pKind
        CASE K_MOVEL,K_MOVEJ:
            FOR k FROM 1 TO 3 DO
                IF NOT VdReadDec(vTok{k+2},1,-99999.9,99999.9,"position",
                    "-99999.9..99999.9",pArg{k}) THEN
                    RETURN FALSE;
                ENDIF
            ENDFOR
            FOR k FROM 4 TO 7 DO
                IF NOT VdReadDec(vTok{k+2},4,-1,1,"quaternion","-1..1",pArg{k}) THEN
                    RETURN FALSE;
                ENDIF
            ENDFOR
            norm:=Sqrt(pArg{4}*pArg{4}+pArg{5}*pArg{5}+pArg{6}*pArg{6}+pArg{7}*pArg{7});
            IF Abs(norm-1)>0.002 THEN
                VdSetFail "RANGE","quaternion is not unit length";
                RETURN FALSE;
            ENDIF
            RETURN VdReadDec(vTok{10},1,0.1,9999.9,"speed","0.1..9999.9",pArg{8});
        CASE K_GRIP:
            RETURN VdReadDec(vTok{3},1,0,999.9,"gripper width","0..999.9",pArg{1});
        CASE K_WAIT:
            RETURN VdReadInt(vTok{3},0,3600000,"milliseconds",pArg{1});
        CASE K_SPEED:
            RETURN VdReadDec(vTok{3},1,0.1,9999.9,"speed","0.1..9999.9",pArg{1});
        CASE K_ATTACH,K_CALL:
            IF NOT VdReadName(vTok{3}) THEN
                RETURN FALSE;
            ENDIF
            pName:=vTok{3};
            RETURN TRUE;
        DEFAULT:
            ! DETACH: no fields
            RETURN TRUE;
        ENDTEST
        RETURN TRUE;
    ENDFUNC

    ! ======================================================================
    ! Sessions and the sequence rules (robot/simledger.py, robot/simcore.py)
    ! ======================================================================

    LOCAL PROC VdHello(string session)
        IF NOT bSession OR session<>sSession THEN
            ! a new session forgets the old one; its queued lines get no reply
            bSession:=TRUE;
            sSession:=session;
            nLastQueued:=0;
            vdLastDone:=0;
            FOR k FROM 1 TO VD_HISTORY DO
                hSeq{k}:=0;
            ENDFOR
            hNext:=1;
            qCount:=0;
            qHead:=1;
        ENDIF
        ! either way HELLO clears the latch: what follows it is fresh
        bLatched:=FALSE;
        VdSend "HELLO "+sSession+" "+NumToStr(vdLastDone,0);
    ENDPROC

    ! The seven rules of docs/PROTOCOL.md, in their order.
    LOCAL PROC VdAdmit(num seq)
        VAR num i;
        IF NOT bSession THEN
            ! no latch without a session
            VdSend VdErrLine(seq,"SEQ","no session: send HELLO first");
            RETURN;
        ENDIF
        IF VdCompleted(seq) THEN
            ! exactly once: answered again, not executed again
            VdSend NumToStr(seq,0)+" ACK";
            VdSend NumToStr(seq,0)+" DONE";
            RETURN;
        ENDIF
        IF seq=nExecSeq THEN
            nExecGen:=nConnGen;
            VdSend NumToStr(seq,0)+" ACK";
            RETURN;
        ENDIF
        i:=VdQueued(seq);
        IF i>0 THEN
            ! pending: its terminal reply now goes to this connection
            qGen{i}:=nConnGen;
            VdSend NumToStr(seq,0)+" ACK";
            RETURN;
        ENDIF
        IF vdHalted AND NOT bStopDrain THEN
            VdRefuse seq,"HALTED","halted by "+VdClip(vdHaltReason,24)+": send RESUME";
            RETURN;
        ENDIF
        IF bLatched THEN
            VdRefuse seq,"STOPPED","line "+NumToStr(nLatchedBy,0)+" failed: send HELLO first";
            RETURN;
        ENDIF
        IF seq<=nLastQueued THEN
            VdRefuse seq,"SEQ","not above "+NumToStr(nLastQueued,0);
            RETURN;
        ENDIF
        IF qCount>=VD_QUEUE THEN
            ! only a client that ignores its window gets here (the daemon's is <= 64)
            VdRefuse seq,"RANGE","more than "+NumToStr(VD_QUEUE,0)+" lines in flight";
            RETURN;
        ENDIF
        VdEnqueue seq;
    ENDPROC

    LOCAL PROC VdEnqueue(num seq)
        VAR num i;
        i:=((qHead-1+qCount) MOD VD_QUEUE)+1;
        qSeq{i}:=seq;
        qKind{i}:=pKind;
        FOR k FROM 1 TO 8 DO
            qArg{i,k}:=pArg{k};
        ENDFOR
        qName{i}:=pName;
        qGen{i}:=nConnGen;
        qCount:=qCount+1;
        nLastQueued:=seq;
        VdSend NumToStr(seq,0)+" ACK";
        VdBusyUpdate;
    ENDPROC

    ! ERR for a line that will never run; within a session it latches and
    ! clears the queue (simcore.refuse).
    LOCAL PROC VdRefuse(num seq,string code,string reason)
        IF bSession THEN
            VdFail seq;
            VdClearQueue "cleared: line "+NumToStr(seq,0)+" was refused";
        ENDIF
        VdSend VdErrLine(seq,code,reason);
    ENDPROC

    LOCAL PROC VdFail(num seq)
        IF NOT bLatched THEN
            bLatched:=TRUE;
            nLatchedBy:=seq;
        ENDIF
    ENDPROC

    LOCAL PROC VdDone(num seq)
        hSeq{hNext}:=seq;
        hNext:=(hNext MOD VD_HISTORY)+1;
        IF seq>vdLastDone THEN
            vdLastDone:=seq;
        ENDIF
    ENDPROC

    LOCAL FUNC bool VdCompleted(num seq)
        FOR k FROM 1 TO VD_HISTORY DO
            IF hSeq{k}=seq THEN
                RETURN TRUE;
            ENDIF
        ENDFOR
        RETURN FALSE;
    ENDFUNC

    LOCAL FUNC num VdQueued(num seq)
        VAR num i;
        VAR num k:=0;
        ! (a FOR loop whose start is above its end counts down in RAPID)
        WHILE k<qCount DO
            i:=((qHead-1+k) MOD VD_QUEUE)+1;
            IF qSeq{i}=seq THEN
                RETURN i;
            ENDIF
            k:=k+1;
        ENDWHILE
        RETURN 0;
    ENDFUNC

    ! Every queued line: ERR STOPPED <reason> (it latches); the queue is empty after.
    LOCAL PROC VdClearQueue(string reason)
        VAR num i;
        WHILE qCount>0 DO
            i:=qHead;
            qHead:=(qHead MOD VD_QUEUE)+1;
            qCount:=qCount-1;
            VdFail qSeq{i};
            VdReply qGen{i},VdErrLine(qSeq{i},"STOPPED",reason);
        ENDWHILE
        qHead:=1;
    ENDPROC

    ! ======================================================================
    ! Execution
    ! ======================================================================

    LOCAL PROC VdExecuteNext()
        VAR num i;
        i:=qHead;
        nExecSeq:=qSeq{i};
        nExecGen:=qGen{i};
        nExecKind:=qKind{i};
        FOR k FROM 1 TO 8 DO
            eArg{k}:=qArg{i,k};
        ENDFOR
        sExecName:=qName{i};
        qHead:=(qHead MOD VD_QUEUE)+1;
        qCount:=qCount-1;
        VdBusyUpdate;
        vFailCode:="";
        vFailText:="";
        VdCheck;
        IF vFailCode="" THEN
            VdPerform;
        ENDIF
        IF vFailCode<>"" THEN
            VdFinishErr;
        ELSEIF vdStopReq<>vdStopAck THEN
            ! a halt came while it ran: VdServe answers it "interrupted"
            RETURN;
        ELSE
            VdFinishDone;
        ENDIF
    ENDPROC

    ! What the cell allows (robot/physics.py: speed, workspace, gripper, tool,
    ! routine). SUPPORT needs the scene, which only the daemon knows.
    LOCAL PROC VdCheck()
        VAR num i;
        TEST nExecKind
        CASE K_MOVEL,K_MOVEJ:
            IF NOT VdCheckSpeed(eArg{8}) THEN
                RETURN;
            ENDIF
            IF NOT VdCheckAxis("x",eArg{1},vdWsMin.x,vdWsMax.x) THEN
                RETURN;
            ENDIF
            IF NOT VdCheckAxis("y",eArg{2},vdWsMin.y,vdWsMax.y) THEN
                RETURN;
            ENDIF
            IF NOT VdCheckAxis("z",eArg{3},vdWsMin.z,vdWsMax.z) THEN
                RETURN;
            ENDIF
        CASE K_SPEED:
            IF NOT VdCheckSpeed(eArg{1}) THEN
                RETURN;
            ENDIF
        CASE K_GRIP:
            IF eArg{1}<vdGripMin OR eArg{1}>vdGripMax THEN
                VdSetFail "GRIPPER","gripper width "+VdFmt(eArg{1},1)+" mm is outside "
                    +VdFmt(vdGripMin,1)+" to "+VdFmt(vdGripMax,1)+" mm";
            ENDIF
        CASE K_ATTACH:
            i:=VdToolIndex(sExecName);
            IF i=0 THEN
                VdSetFail "TOOL","there is no tool called "+VdClip(sExecName,32);
            ELSEIF vdToolName<>"" THEN
                VdSetFail "TOOL","cannot attach the "+VdClip(sExecName,20)+": the "
                    +VdClip(vdToolName,20)+" is attached";
            ELSEIF NOT VdAtStand(i) THEN
                VdSetFail "TOOL","cannot attach the "+VdClip(sExecName,32)
                    +": the arm is not at its stand";
            ENDIF
        CASE K_DETACH:
            i:=VdToolIndex(vdToolName);
            IF vdToolName="" THEN
                VdSetFail "TOOL","cannot release a tool: none is attached";
            ELSEIF i=0 THEN
                VdSetFail "TOOL","cannot release the "+VdClip(vdToolName,32)+": not at its stand";
            ELSEIF NOT VdAtStand(i) THEN
                VdSetFail "TOOL","cannot release the "+VdClip(vdToolName,32)+": not at its stand";
            ENDIF
        CASE K_CALL:
            i:=VdRoutineIndex(sExecName);
            IF i=0 THEN
                VdSetFail "ROUTINE","there is no routine called "+VdClip(sExecName,32);
            ELSEIF vdRoutineTools{i}<>"" AND vdRoutineTools{i}<>vdToolName THEN
                IF vdToolName="" THEN
                    VdSetFail "ROUTINE",VdClip(sExecName,20)+" needs the "
                        +VdClip(vdRoutineTools{i},20)+" (no tool is attached)";
                ELSE
                    VdSetFail "ROUTINE",VdClip(sExecName,16)+" needs the "
                        +VdClip(vdRoutineTools{i},16)+" (the "+VdClip(vdToolName,16)
                        +" is attached)";
                ENDIF
            ENDIF
        DEFAULT:
            ! WAIT: nothing to check
        ENDTEST
    ENDPROC

    LOCAL FUNC bool VdCheckSpeed(num v)
        IF v<=0 OR v>vdMaxSpeed THEN
            VdSetFail "SPEED","speed "+VdFmt(v,1)+" mm/s is outside (0, "+VdFmt(vdMaxSpeed,1)
                +"] mm/s";
            RETURN FALSE;
        ENDIF
        RETURN TRUE;
    ENDFUNC

    LOCAL FUNC bool VdCheckAxis(string axis,num value,num lo,num hi)
        IF value<lo OR value>hi THEN
            VdSetFail "WORKSPACE","target "+axis+" = "+VdFmt1(value)
                +" mm is outside the workspace ("+VdFmt(lo,1)+" to "+VdFmt(hi,1)+" mm)";
            RETURN FALSE;
        ENDIF
        RETURN TRUE;
    ENDFUNC

    ! Do it. Each blocking instruction sits between bExecuting:=TRUE and
    ! bExecuting:=FALSE and runs only if no halt was requested meanwhile: a
    ! request before bExecuting skips it, one after it is cut by the trap.
    LOCAL PROC VdPerform()
        VAR robtarget target;
        VAR speeddata speed;
        TEST nExecKind
        CASE K_MOVEL,K_MOVEJ:
            target:=[[eArg{1},eArg{2},eArg{3}],[eArg{4},eArg{5},eArg{6},eArg{7}],[0,0,0,0],
                [9E9,9E9,9E9,9E9,9E9,9E9]];
            ! 4 decimals leave the quaternion up to ~1e-4 off unit length
            target.rot:=NOrient(target.rot);
            ! fine: DONE means the arm is there
            speed:=[eArg{8},500,5000,1000];
            bExecuting:=TRUE;
            IF vdStopReq=vdStopAck THEN
                IF nExecKind=K_MOVEL THEN
                    MoveL target,speed,fine,vdTool\WObj:=vdWobj;
                ELSE
                    MoveJ target,speed,fine,vdTool\WObj:=vdWobj;
                ENDIF
            ENDIF
            bExecuting:=FALSE;
        CASE K_GRIP:
            bExecuting:=TRUE;
            IF vdStopReq=vdStopAck THEN
                VdGripperMove eArg{1};
            ENDIF
            bExecuting:=FALSE;
            IF vdStopReq=vdStopAck THEN
                vdGripper:=eArg{1};
            ENDIF
        CASE K_WAIT:
            bExecuting:=TRUE;
            VdDwell eArg{1}/1000;
            bExecuting:=FALSE;
        CASE K_SPEED:
            nDefaultSpeed:=eArg{1};
        CASE K_ATTACH:
            bExecuting:=TRUE;
            IF vdStopReq=vdStopAck THEN
                VdToolChanger TRUE;
            ENDIF
            bExecuting:=FALSE;
            IF vdStopReq=vdStopAck THEN
                vdToolName:=sExecName;
            ENDIF
        CASE K_DETACH:
            bExecuting:=TRUE;
            IF vdStopReq=vdStopAck THEN
                VdToolChanger FALSE;
            ENDIF
            bExecuting:=FALSE;
            IF vdStopReq=vdStopAck THEN
                vdToolName:="";
            ENDIF
        CASE K_CALL:
            VdCallRoutine sExecName;
        ENDTEST
    ENDPROC

    ! WAIT in short steps, so that a halt also ends it when the trap does not.
    LOCAL PROC VdDwell(num seconds)
        VAR clock clk;
        VAR num left;
        ClkReset clk;
        ClkStart clk;
        left:=seconds;
        WHILE left>0 AND vdStopReq=vdStopAck DO
            IF left>0.05 THEN
                WaitTime 0.05;
            ELSE
                WaitTime left;
            ENDIF
            left:=seconds-ClkRead(clk);
        ENDWHILE
        ClkStop clk;
    ENDPROC

    ! CALL: late binding, only for the names in vdRoutineNames (VdCheck).
    LOCAL PROC VdCallRoutine(string name)
        bExecuting:=TRUE;
        IF vdStopReq=vdStopAck THEN
            %name%;
        ENDIF
        bExecuting:=FALSE;
    ERROR
        bExecuting:=FALSE;
        IF ERRNO=ERR_REFUNKPRC OR ERRNO=ERR_CALLPROC THEN
            VdSetFail "ROUTINE","routine "+VdClip(name,32)+" is not loaded in this task";
        ELSE
            VdSetFail "ROUTINE","routine "+VdClip(name,32)+" failed with error "
                +NumToStr(ERRNO,0);
        ENDIF
        SkipWarn;
        RETURN;
    ENDPROC

    ! ------------------------------------------------------------------------
    ! THE GRIPPER: ADAPT THIS PROCEDURE TO THE GRIPPER INSTALLED ON THE GOFA.
    ! As shipped it writes the opening (mm) to a virtual analog output and
    ! waits vdGripTime. For an ABB SmartGripper replace the body with its own
    ! call (e.g. g_MoveTo width;) and check the width range (vdGripMin/Max);
    ! for a pneumatic gripper set/reset its valve outputs here.
    ! ------------------------------------------------------------------------
    LOCAL PROC VdGripperMove(num width)
        SetAO aoVoicedGrip,width;
        WaitTime vdGripTime;
    ENDPROC

    ! ------------------------------------------------------------------------
    ! THE TOOL CHANGER: ADAPT TO THE INSTALLED CHANGER (lock = take the tool).
    ! If the cell's poses refer to each tool's own TCP, also switch vdTool here.
    ! ------------------------------------------------------------------------
    LOCAL PROC VdToolChanger(bool lock)
        IF lock THEN
            SetDO doVoicedToolLock,1;
        ELSE
            SetDO doVoicedToolLock,0;
        ENDIF
        WaitTime vdToolTime;
    ENDPROC

    LOCAL FUNC num VdToolIndex(string name)
        IF name="" THEN
            RETURN 0;
        ENDIF
        FOR k FROM 1 TO 8 DO
            IF vdToolNames{k}=name THEN
                RETURN k;
            ENDIF
        ENDFOR
        RETURN 0;
    ENDFUNC

    LOCAL FUNC num VdRoutineIndex(string name)
        FOR k FROM 1 TO 16 DO
            IF vdRoutineNames{k}=name AND name<>"" THEN
                RETURN k;
            ENDIF
        ENDFOR
        RETURN 0;
    ENDFUNC

    ! Within 15 mm horizontally and 10 mm vertically of the stand (physics.py).
    LOCAL FUNC bool VdAtStand(num i)
        VAR robtarget here;
        VAR num dx;
        VAR num dy;
        here:=CRobT(\Tool:=vdTool\WObj:=vdWobj);
        dx:=here.trans.x-vdToolStands{i}.x;
        dy:=here.trans.y-vdToolStands{i}.y;
        RETURN Sqrt(dx*dx+dy*dy)<=VD_STAND_XY AND Abs(here.trans.z-vdToolStands{i}.z)<=VD_STAND_Z;
    ENDFUNC

    LOCAL PROC VdFinishDone()
        VdDone nExecSeq;
        VdReply nExecGen,NumToStr(nExecSeq,0)+" DONE";
        nExecSeq:=0;
        VdBusyUpdate;
    ENDPROC

    LOCAL PROC VdFinishErr()
        VAR num seq;
        seq:=nExecSeq;
        ! lines that had already arrived are queued first, then cleared
        VdPump vdDrainTime;
        VdFail seq;
        VdReply nExecGen,VdErrLine(seq,vFailCode,vFailText);
        nExecSeq:=0;
        VdClearQueue "cleared: line "+NumToStr(seq,0)+" failed";
        VdBusyUpdate;
    ENDPROC

    ! ======================================================================
    ! Halting (simcore.halt): the line executing is "interrupted", the queue
    ! "cleared", then the request is acknowledged for VoicedControl.
    ! ======================================================================

    LOCAL PROC VdHalt()
        VAR string reason;
        VAR num req;
        req:=vdStopReq;
        reason:=VdClip(vdStopReason,24);
        ! lines sent before the halt are queued (then cleared), not refused
        bStopDrain:=TRUE;
        VdPump vdDrainTime;
        bStopDrain:=FALSE;
        IF nExecSeq<>0 THEN
            VdFail nExecSeq;
            VdReply nExecGen,VdErrLine(nExecSeq,"STOPPED","interrupted by "+reason);
            nExecSeq:=0;
        ENDIF
        VdClearQueue "cleared by "+reason;
        VdBusyUpdate;
        Incr vdStatusCount;
        IF reason="heartbeat" THEN
            ! The daemon's link is dead: it drops both channels and reconnects. A
            ! half-open motion connection would keep the new one waiting (one
            ! client at a time), so close it. (The simulator replaces it instead.)
            VdDropClient;
        ENDIF
        vdStopAck:=req;
    ENDPROC

    ! A cut without a request (see main): halt as VoicedControl would.
    LOCAL PROC VdHaltSelf(string reason)
        IF NOT vdHalted THEN
            vdHaltReason:=reason;
            vdHalted:=TRUE;
        ENDIF
        vdStopReason:=reason;
        bStopDrain:=TRUE;
        VdPump vdDrainTime;
        bStopDrain:=FALSE;
        VdFail nExecSeq;
        VdReply nExecGen,VdErrLine(nExecSeq,"STOPPED","interrupted by "+reason);
        nExecSeq:=0;
        VdClearQueue "cleared by "+reason;
        VdBusyUpdate;
        Incr vdStatusCount;
    ENDPROC

    LOCAL PROC VdBusyUpdate()
        VAR bool busy;
        busy:=qCount>0 OR nExecSeq<>0;
        IF busy<>vdBusy THEN
            vdBusy:=busy;
            Incr vdStatusCount;
        ENDIF
    ENDPROC

    ! ======================================================================
    ! Replies
    ! ======================================================================

    LOCAL PROC VdSend(string line)
        IF bConnected THEN
            SocketSend sockCli\Str:=line+VD_NL;
        ENDIF
    ERROR
        SkipWarn;
        VdDropClient;
        RETURN;
    ENDPROC

    ! The terminal reply of a queued or executing line goes to the connection
    ! that sent (or re-sent) it, or nowhere.
    LOCAL PROC VdReply(num gen,string line)
        IF gen=nConnGen THEN
            VdSend line;
        ENDIF
    ENDPROC

    LOCAL FUNC string VdErrLine(num seq,string code,string reason)
        RETURN VdFitJoin(NumToStr(seq,0)+" ERR "+code,reason);
    ENDFUNC

    ! prefix, then as many whole words of `words` as fit in 79 characters
    ! (wire.fit_reason); never builds a string longer than 80.
    LOCAL FUNC string VdFitJoin(string prefix,string words)
        VAR string out;
        VAR string word;
        VAR num len;
        VAR num pos:=1;
        VAR num sp;
        out:=prefix;
        len:=StrLen(words);
        WHILE pos<=len DO
            sp:=StrFind(words,pos," ");
            IF sp>pos THEN
                word:=StrPart(words,pos,sp-pos);
                IF StrLen(out)+1+StrLen(word)>VD_MAX_LINE THEN
                    RETURN out;
                ENDIF
                out:=out+" "+word;
            ENDIF
            pos:=sp+1;
        ENDWHILE
        RETURN out;
    ENDFUNC

    ! ======================================================================
    ! Field readers (robot/protocol/wire.py): plain decimals only.
    ! StrToVal alone would also take "1e3" or "+5", so the form is checked first.
    ! ======================================================================

    LOCAL PROC VdSetFail(string code,string text)
        vFailCode:=code;
        vFailText:=text;
    ENDPROC

    ! -?d{1,5}(.d{1,dec})?, then lo..hi (`span` is the range as text).
    LOCAL FUNC bool VdReadDec(string tok,num dec,num lo,num hi,string what,string span,
        INOUT num val)
        VAR num len;
        VAR num p:=1;
        VAR num dot;
        VAR num intDigits;
        VAR num fracDigits:=0;
        len:=StrLen(tok);
        IF len>0 THEN
            IF StrPart(tok,1,1)="-" THEN
                p:=2;
            ENDIF
        ENDIF
        IF p>len OR len>12 THEN
            VdSetFail "PARSE",what+" is not a number with at most "+NumToStr(dec,0)+" decimals";
            RETURN FALSE;
        ENDIF
        dot:=StrFind(tok,p,".");
        intDigits:=dot-p;
        IF dot<=len THEN
            fracDigits:=len-dot;
        ENDIF
        IF intDigits<1 OR intDigits>5 OR (dot<=len AND (fracDigits<1 OR fracDigits>dec)) THEN
            VdSetFail "PARSE",what+" is not a number with at most "+NumToStr(dec,0)+" decimals";
            RETURN FALSE;
        ENDIF
        IF StrFind(tok,p,VD_DIGITS\NotInSet)<>dot THEN
            VdSetFail "PARSE",what+" is not a number with at most "+NumToStr(dec,0)+" decimals";
            RETURN FALSE;
        ENDIF
        IF dot<len THEN
            IF StrFind(tok,dot+1,VD_DIGITS\NotInSet)<=len THEN
                VdSetFail "PARSE",what+" is not a number with at most "+NumToStr(dec,0)
                    +" decimals";
                RETURN FALSE;
            ENDIF
        ENDIF
        IF NOT StrToVal(tok,val) THEN
            VdSetFail "PARSE",what+" is not a number with at most "+NumToStr(dec,0)+" decimals";
            RETURN FALSE;
        ENDIF
        IF val<lo OR val>hi THEN
            VdSetFail "RANGE",what+" "+tok+" outside "+span;
            RETURN FALSE;
        ENDIF
        RETURN TRUE;
    ENDFUNC

    ! d{1,7}, then lo..hi.
    LOCAL FUNC bool VdReadInt(string tok,num lo,num hi,string what,INOUT num val)
        VAR num len;
        len:=StrLen(tok);
        IF len<1 OR len>7 THEN
            VdSetFail "PARSE",what+" is not a whole number";
            RETURN FALSE;
        ENDIF
        IF StrFind(tok,1,VD_DIGITS\NotInSet)<=len THEN
            VdSetFail "PARSE",what+" is not a whole number";
            RETURN FALSE;
        ENDIF
        IF NOT StrToVal(tok,val) THEN
            VdSetFail "PARSE",what+" is not a whole number";
            RETURN FALSE;
        ENDIF
        IF val<lo OR val>hi THEN
            VdSetFail "RANGE",what+" "+tok+" outside "+NumToStr(lo,0)+".."+NumToStr(hi,0);
            RETURN FALSE;
        ENDIF
        RETURN TRUE;
    ENDFUNC

    ! [A-Za-z0-9_]{1,32}
    LOCAL FUNC bool VdReadName(string tok)
        VAR num len;
        len:=StrLen(tok);
        IF len<1 OR len>32 THEN
            VdSetFail "PARSE","name '"+VdClip(tok,32)+"' does not match [A-Za-z0-9_]{1,32}";
            RETURN FALSE;
        ENDIF
        IF StrFind(tok,1,VD_NAME_CHARS\NotInSet)<=len THEN
            VdSetFail "PARSE","name '"+VdClip(tok,32)+"' does not match [A-Za-z0-9_]{1,32}";
            RETURN FALSE;
        ENDIF
        RETURN TRUE;
    ENDFUNC

    ! [0-9a-f]{8}
    LOCAL FUNC bool VdReadSession(string tok)
        IF StrLen(tok)<>8 THEN
            VdSetFail "PARSE","session '"+VdClip(tok,20)+"' does not match [0-9a-f]{8}";
            RETURN FALSE;
        ENDIF
        IF StrFind(tok,1,VD_HEX\NotInSet)<=8 THEN
            VdSetFail "PARSE","session '"+tok+"' does not match [0-9a-f]{8}";
            RETURN FALSE;
        ENDIF
        RETURN TRUE;
    ENDFUNC

    ! Split at single spaces into vTok; FALSE on an empty field.
    LOCAL FUNC bool VdSplit(string line)
        VAR num len;
        VAR num pos:=1;
        VAR num sp;
        len:=StrLen(line);
        vNTok:=0;
        WHILE pos<=len DO
            sp:=StrFind(line,pos," ");
            IF sp=pos OR sp=len THEN
                ! a leading, double or trailing space
                RETURN FALSE;
            ENDIF
            vNTok:=vNTok+1;
            IF vNTok<=VD_MAX_TOK THEN
                vTok{vNTok}:=StrPart(line,pos,sp-pos);
            ENDIF
            pos:=sp+1;
        ENDWHILE
        RETURN vNTok>0;
    ENDFUNC

    ! The value of the first byte that is not printable ASCII, or -1.
    LOCAL FUNC num VdBadByte(string line)
        VAR string c;
        ! (called for a line of at least one character)
        FOR k FROM 1 TO StrLen(line) DO
            c:=StrPart(line,k,1);
            IF StrFind(VD_PRINT_A,1,c)>StrLen(VD_PRINT_A)
                AND StrFind(VD_PRINT_B,1,c)>StrLen(VD_PRINT_B) THEN
                RETURN StrToByte(c\Char);
            ENDIF
        ENDFOR
        RETURN -1;
    ENDFUNC

    LOCAL FUNC string VdHex2(num b)
        RETURN StrPart(VD_HEX,(b DIV 16)+1,1)+StrPart(VD_HEX,(b MOD 16)+1,1);
    ENDFUNC

    LOCAL FUNC string VdClip(string s,num n)
        IF StrLen(s)<=n THEN
            RETURN s;
        ENDIF
        RETURN StrPart(s,1,n);
    ENDFUNC

    ! A number as the wire writes it (wire.write_num): at most `dec` decimals,
    ! no trailing zeros, no "-0".
    LOCAL FUNC string VdFmt(num value,num dec)
        VAR string s;
        VAR num len;
        s:=NumToStr(value,dec);
        len:=StrLen(s);
        IF StrFind(s,1,".")<=len THEN
            WHILE StrPart(s,len,1)="0" DO
                len:=len-1;
            ENDWHILE
            IF StrPart(s,len,1)="." THEN
                len:=len-1;
            ENDIF
            s:=StrPart(s,1,len);
        ENDIF
        IF s="-0" THEN
            s:="0";
        ENDIF
        RETURN s;
    ENDFUNC

    ! One decimal always, as physics.py writes a target ({value:.1f}).
    LOCAL FUNC string VdFmt1(num value)
        VAR string s;
        s:=VdFmt(value,1);
        IF StrFind(s,1,".")>StrLen(s) THEN
            s:=s+".0";
        ENDIF
        RETURN s;
    ENDFUNC
ENDMODULE
